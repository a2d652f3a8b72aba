// What a test, or a script run inside one, meets when something the run needs was never obtained on this machine:
// it names the thing and the one command that provides it, instead of installing or building anything itself.

/** The command that obtains every prerequisite of the two commands (docs/how-to/development.md, "Prerequisites"). */
export const prepareCommand = './scripts/prepare'

export class MissingPrerequisite extends Error {
  override readonly name = 'MissingPrerequisite'
  constructor(
    /** what is missing, as a reader knows it: "Consul 1.16.3", "Debian's chromium" */
    readonly what: string,
    /** how the preparation obtains it: "builds it once from the Go module proxy" */
    readonly how: string,
  ) {
    super(`${what} is missing on this machine: run ${prepareCommand} (it ${how})`)
  }
}
