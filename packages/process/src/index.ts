// @meridian/process: long-running processes declared on one module — states, steps with deadlines, retries and
// compensations, a pure decision — persisted with the outbox in the owning service's database, timed by one clock,
// and shown to operators through one API for every type.
export {
  type AnswerRoute,
  type AnswerRoutes,
  type AnyProcessDefinition,
  type ClockFact,
  type CommandContext,
  type Decision,
  defineProcess,
  type EventRoute,
  type EventRoutes,
  type FactSource,
  type InstanceBase,
  type KeyedEventRoute,
  type LogLine,
  type MechanicsOptions,
  type OperatorFact,
  type OwnerDeclaration,
  type OwnFact,
  ProcessConflict,
  type ProcessDefinition,
  type Scalar,
  type StandardFact,
  type StepDeclaration,
  type StepFailedFact,
  type StepMoves,
  type Steps,
  type StoredInstance,
} from './definition.ts'
export {
  createProcessManager,
  followedTypes,
  type ProcessAlerts,
  type ProcessManager,
  type ProcessManagerOptions,
} from './manager.ts'
export {
  compensationOrderOf,
  decideOn,
  newInstance,
  type StepMechanics,
  stepMechanics,
  unchanged,
} from './mechanics.ts'
export { migrateProcessTables, processMigrationsDir } from './migrate.ts'
export { processHref } from './operators.ts'
export { type RegisterProcessesOptions, registerProcesses } from './register.ts'
export { type AdminProcessesRoutesOptions, adminProcessesRoutes } from './routes.ts'
export {
  createProcessStore,
  type InstanceChange,
  type NewLogLine,
  type ProcessListRequest,
  type ProcessStore,
  processList,
  type StoredLogLine,
} from './store.ts'
