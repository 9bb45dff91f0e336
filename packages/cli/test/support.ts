/**
 * Runs `tickwork` in-process with explicit arguments and captures what it prints, plus the exit
 * code `NodeRuntime.runMain` would give the process for the same outcome.
 */
import { NodeServices } from "@effect/platform-node"
import { Console, Effect, type Exit, Layer, Runtime } from "effect"
import { CliOutput } from "effect/cli"
import { TestConsole } from "effect/testing"
import { Cli } from "../src/index.ts"

/** What one run printed and how it ended. */
export interface Outcome {
  /** Everything written with `Console.log`, joined by newlines. */
  readonly stdout: string
  /** Everything written with `Console.error`, joined by newlines. */
  readonly stderr: string
  /** The process exit code the bin would end with. */
  readonly code: number
  readonly exit: Exit.Exit<void, unknown>
}

/** The exit code runMain's default teardown gives an outcome. */
export const exitCode = (exit: Exit.Exit<unknown, unknown>): number => {
  let code = -1
  Runtime.defaultTeardown(exit, (c) => {
    code = c
  })
  return code
}

const layer = Layer.mergeAll(
  NodeServices.layer,
  // Plain text whatever the terminal: the tests compare strings.
  CliOutput.layer(CliOutput.defaultFormatter({ colors: false })),
)

/** Runs `tickwork <args>`; never fails (the failure is in `exit`). */
export const tickwork = (...args: ReadonlyArray<string>): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    // A console of its own per run (a provided layer would be shared between runs in one test).
    const console = yield* TestConsole.make
    const exit = yield* Effect.exit(
      Cli.runWith(args).pipe(Effect.provideService(Console.Console, console)),
    )
    const stdout = (yield* console.logLines).join("\n")
    const stderr = (yield* console.errorLines).join("\n")
    return { stdout, stderr, code: exitCode(exit), exit }
  }).pipe(Effect.provide(layer))

/** The output's lines, for runs that print one slot per line. */
export const lines = (outcome: Outcome): Array<string> =>
  outcome.stdout === "" ? [] : outcome.stdout.split("\n").filter((l) => !l.startsWith("# "))

/** The `# ` header lines of `explain`'s text output: the expression in words and its notes. */
export const header = (outcome: Outcome): Array<string> =>
  outcome.stdout.split("\n").filter((l) => l.startsWith("# "))
