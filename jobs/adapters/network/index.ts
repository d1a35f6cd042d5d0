import type { Knex } from 'knex';
import { createFakeNetworkAdapter } from './fake.js';
import { UnknownNetworkDriverError, type NetworkAdapter } from './types.js';

export * from './types.js';
export { createFakeNetworkAdapter, FAKE_FAILURE_KINDS, type FakeFailureKind } from './fake.js';

/** The network drivers of this build, by nas.driver (the enum of `driver` in the NAS API). */
export const NETWORK_DRIVERS = ['fake'] as const;
/** One of NETWORK_DRIVERS. */
export type NetworkDriver = (typeof NETWORK_DRIVERS)[number];

/** What built-in drivers may need from the process (the fake keeps its sessions in PostgreSQL). */
export interface NetworkAdapterDeps {
  knex: Knex;
}

const BUILT_IN: Record<NetworkDriver, (deps: NetworkAdapterDeps) => NetworkAdapter> = {
  fake: (deps) => createFakeNetworkAdapter(deps.knex),
};

/**
 * The adapter for a driver name.
 * @param deps what built-in drivers need (knex)
 * @param overrides adapters that replace the built-in ones (tests inject through JobDeps.networkAdapters)
 * @throws UnknownNetworkDriverError for a name no driver answers to
 */
export function networkAdapterFor(
  driver: string,
  deps: NetworkAdapterDeps,
  overrides: Readonly<Record<string, NetworkAdapter>> = {},
): NetworkAdapter {
  if (Object.hasOwn(overrides, driver)) return overrides[driver];
  if (Object.hasOwn(BUILT_IN, driver)) return BUILT_IN[driver as NetworkDriver](deps);
  throw new UnknownNetworkDriverError(driver);
}
