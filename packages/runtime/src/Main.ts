/**
 * Running a scheduler as a process's main program, with exit codes that tell a stop from a
 * failure. Like `NodeRuntime.runMain`, {@link runMain} runs the program as the main fiber and
 * interrupts it on SIGINT and SIGTERM, so its scopes close (a scheduler shuts down under its
 * policy, a durable worker hands its claims back). It differs in the exit code after a signal:
 *
 * | how the program ended                                   | exit code                         |
 * | ------------------------------------------------------- | --------------------------------- |
 * | it succeeded                                            | 0                                 |
 * | SIGTERM, then a clean shutdown (interruptions only)     | **0** (`NodeRuntime.runMain`: 130) |
 * | SIGINT (Ctrl-C), then a clean shutdown                  | 130                               |
 * | it failed, or its shutdown failed (signal or not)       | the error's code, 1 by default    |
 *
 * SIGTERM is how supervisors ask a service to stop (systemd, Kubernetes, Docker, a deploy); a
 * worker that stopped as asked did its job, and 0 is what they read as a clean stop (systemd
 * and Kubernetes count 143 as a failure unless told otherwise). SIGINT keeps the shell's 130, so
 * `worker && next` does not go on after a Ctrl-C.
 *
 * **Example** (A worker that exits 0 on SIGTERM)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Main, Schedule, Scheduler } from "@tickwork/runtime"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.Scheduler
 *   yield* scheduler.schedule({ id: "tick", schedule: Schedule.fixedRate("1 minute"), job: Effect.log("tick") })
 *   return yield* Effect.never
 * })
 *
 * Main.runMain(Effect.scoped(program).pipe(Effect.provide(Scheduler.layer())))
 * ```
 *
 * @since 0.2.0
 */
import { Cause, type Effect, Exit, Runtime } from "effect"

/**
 * The exit code for how a program ended: `code` is what the teardown chose (by default
 * `Runtime.defaultTeardown`: 0, 130 for interruptions only, the error's code otherwise); after
 * SIGTERM, interruptions only mean the program shut down as asked, and give 0.
 *
 * @category running
 * @since 0.2.0
 */
export const exitCode = (
  exit: Exit.Exit<unknown, unknown>,
  code: number,
  signal: "SIGINT" | "SIGTERM" | undefined,
): number =>
  signal === "SIGTERM" && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? 0 : code

/**
 * Runs `effect` as the process's main program: SIGINT and SIGTERM interrupt it (its finalizers
 * run), and the process exits with {@link exitCode} when it has ended — after a signal or a
 * failure; after a success without a signal, Node exits by itself when nothing is left to do.
 * The options are `NodeRuntime.runMain`'s.
 *
 * @category running
 * @since 0.2.0
 */
export const runMain: {
  (options?: {
    readonly disableErrorReporting?: boolean | undefined
    readonly teardown?: Runtime.Teardown | undefined
  }): <E, A>(effect: Effect.Effect<A, E>) => void
  <E, A>(
    effect: Effect.Effect<A, E>,
    options?: {
      readonly disableErrorReporting?: boolean | undefined
      readonly teardown?: Runtime.Teardown | undefined
    },
  ): void
} = Runtime.makeRunMain(({ fiber, teardown }) => {
  // The first signal decides the code: a second one (an impatient Ctrl-C during a drain) only
  // interrupts again.
  let signal: "SIGINT" | "SIGTERM" | undefined
  const onSigint = () => interrupt("SIGINT")
  const onSigterm = () => interrupt("SIGTERM")
  const interrupt = (received: "SIGINT" | "SIGTERM") => {
    signal ??= received
    fiber.interruptUnsafe(fiber.id)
  }
  fiber.addObserver((exit) => {
    process.removeListener("SIGINT", onSigint)
    process.removeListener("SIGTERM", onSigterm)
    teardown(exit, (code) => {
      const final = exitCode(exit, code, signal)
      // As NodeRuntime.runMain: a program that succeeded on its own lets Node exit when its
      // event loop is empty; anything else exits now, with its code.
      if (signal !== undefined || final !== 0) process.exit(final)
    })
  })
  process.on("SIGINT", onSigint)
  process.on("SIGTERM", onSigterm)
})
