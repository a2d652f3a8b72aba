// The demo data (@meridian/infra/demo): the seed, its command, and what it contains (accounts, products, names).
export {
  describeSeed,
  runSeedCommand,
  SeedCommandError,
  type SeedSettings,
  seedSettings,
  seedUsage,
} from './command.ts'
export * from './content.ts'
export { type DemoOrder, type DemoOrderState, demoOrderStates } from './orders.ts'
export { type SeedOptions, type SeedOutcome, seedDemo, seededServices, waitForSystem } from './seed.ts'
