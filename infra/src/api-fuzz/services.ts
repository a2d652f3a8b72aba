// Which services the API fuzzing step runs: every one the system has (system/services.ts), so a new service is fuzzed
// by existing.
export {
  discoverServices,
  gatewayName,
  identityProvider,
  type SystemService as FuzzedService,
} from '../system/services.ts'
