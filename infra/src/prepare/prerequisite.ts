// What a run of the two commands needs on the machine before its first test, declared: Debian packages (installed in
// one apt-get call) and steps that obtain one thing each (a build, a download, an image). Workspaces declare their own
// in src/prerequisites.ts (deploy's chart tools); infra declares the engines', the containers' and the browser's.

/**
 * What a prerequisite is for; a command asks for the purposes it serves (`./scripts/prepare --for dev`):
 * - engines: PostgreSQL, Kafka, Consul and Redis as native processes (scripts/infra up, the tests' setup)
 * - trace-store: Jaeger, the development trace store (scripts/infra up, ./scripts/dev)
 * - e2e: what the end-to-end tests drive besides the system (Chromium, jq for README's quick start)
 * - containers: a container engine and the Node bases of Meridian's images, compose (scripts/images)
 * - engine-images: the engines as images for the tests' container path (scripts/engine-images)
 * - cluster: hosts in network namespaces and the links between them (the cluster campaign)
 * - deploy: the chart's and the alert rules' tools (deploy/)
 * - fuzz: schemathesis (scripts/api-fuzz)
 * - payments: stripe-mock, Stripe's API description the payment adapter's requests are checked against
 * - mail: Mailpit, the SMTP server that keeps what it is sent (scripts/infra up, ./scripts/dev, the tests that read mail)
 */
export const purposes = [
  'engines',
  'trace-store',
  'e2e',
  'containers',
  'engine-images',
  'cluster',
  'deploy',
  'fuzz',
  'payments',
  'mail',
] as const
export type Purpose = (typeof purposes)[number]

/** The purposes of each command: `dev` (./scripts/dev) and `test` (./scripts/test: every purpose). */
export const purposeSets: Record<'dev' | 'test', readonly Purpose[]> = {
  dev: ['engines', 'trace-store', 'mail'],
  test: purposes,
}

export interface DebianPackage {
  package: string
  /** true when what the package provides is on this machine (a command on PATH, a module) */
  installed(): boolean
  /** what it is for, in a summary line */
  why: string
  purposes: readonly Purpose[]
}

export interface ObtainContext {
  /** where a step's long output goes (a build's, a download's): read when it fails */
  logFile: string
  /** a line of progress, prefixed with the step's name */
  say(message: string): void
}

export interface PrerequisiteStep {
  /** a short name, unique across the repository: consul, helm, engine-images */
  name: string
  /** what a reader knows it as: "Consul v1.16.3" */
  title: string
  purposes: readonly Purpose[]
  /** steps that must be there first, by name ('debian': the Debian packages) */
  needs?: readonly string[]
  /** compiles (a Go build): at most four such steps run at once, whatever else runs */
  heavy?: boolean
  /** what it is where it is (a path, a version) when present; undefined when missing */
  present(): Promise<string | undefined>
  /** what exactly is missing, when more can be said than "not on this machine" */
  describeMissing?(): string
  /** obtains it; says what it got (a path, a version) */
  obtain(context: ObtainContext): Promise<string>
}

export interface Prerequisites {
  debian: DebianPackage[]
  steps: PrerequisiteStep[]
}
