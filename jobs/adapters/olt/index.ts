import { fakeOltAdapter } from './fake.js';
import { UnknownOltDriverError, type OltAdapter } from './types.js';

export * from './types.js';
export { fakeOltAdapter, fakeReading } from './fake.js';

/** The OLT drivers of this build, by olts.driver. */
export const OLT_DRIVERS = ['fake'] as const;
/** One of OLT_DRIVERS. */
export type OltDriver = (typeof OLT_DRIVERS)[number];

const BUILT_IN: Record<OltDriver, OltAdapter> = { fake: fakeOltAdapter };

/**
 * The adapter for a driver name.
 * @param overrides adapters that replace the built-in ones (tests inject through JobDeps.oltAdapters)
 * @throws UnknownOltDriverError for a name no driver answers to
 */
export function oltAdapterFor(driver: string, overrides: Readonly<Record<string, OltAdapter>> = {}): OltAdapter {
  const own = Object.hasOwn(overrides, driver) ? overrides[driver] : undefined;
  const adapter = own ?? (Object.hasOwn(BUILT_IN, driver) ? BUILT_IN[driver as OltDriver] : undefined);
  if (!adapter) throw new UnknownOltDriverError(driver);
  return adapter;
}
