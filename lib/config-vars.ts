/**
 * Parsers of single environment variables for lib/config.ts (DESIGN.md §8): each answers the
 * default when the variable is unset or empty and throws ConfigError naming the variable when it is
 * malformed.
 */

/** Thrown when an environment variable is malformed; the message names the variable. */
export class ConfigError extends Error {}

/** A TCP port (0-65535) from `env[name]`, `def` when unset or empty. @throws ConfigError naming the variable */
export function port(env: NodeJS.ProcessEnv, name: string, def: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(`${name} must be a TCP port (0-65535), got "${raw}"`);
  return n;
}

/** An integer >= 1 from `env[name]`, `def` when unset or empty. @throws ConfigError naming the variable */
export function positiveInt(env: NodeJS.ProcessEnv, name: string, def: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** A whole number >= 0 from `env[name]`, `def` when unset or empty. @throws ConfigError naming the variable */
export function nonNegativeInt(env: NodeJS.ProcessEnv, name: string, def: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n))
    throw new ConfigError(`${name} must be a whole number (0 or more), got "${raw}"`);
  return n;
}

/** A number > 0 from `env[name]`, `def` when unset or empty. @throws ConfigError naming the variable */
export function positiveNumber(env: NodeJS.ProcessEnv, name: string, def: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !(n > 0))
    throw new ConfigError(`${name} must be a number greater than 0, got "${raw}"`);
  return n;
}

/**
 * A switch (1/true/yes/on, 0/false/no/off) from `env[name]`, `def` when unset.
 * @throws ConfigError naming the variable
 */
export function flag(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return def;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be 1/true/on or 0/false/off, got "${env[name]}"`);
}

/**
 * A URL with one of `protocols` (e.g. `redis:`) from `env[name]`, undefined when unset.
 * @throws ConfigError naming the variable
 */
export function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')})`);
  }
  if (!protocols.includes(u.protocol))
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${u.protocol}`);
  return raw;
}
