/**
 * @internal
 * Deadlines for store operations: every operation fails with a `StoreError` instead of ending
 * its caller's fiber, and (with a deadline) within `deadlineMs`, abandoning a connection that
 * never answers on its own fiber.
 */
import { Cause, Effect, Exit, Fiber, Option, Result } from "effect"
import { StoreError } from "../Errors.ts"
import * as Failure from "./failure.ts"

/** The deadline wrapper of a store whose operations may take `deadlineMs` (none if undefined). */
export const make = (deadlineMs: number | undefined) => {
  /**
   * A failed operation as a `StoreError`: its typed error as it is; a defect, or an
   * interruption that did not come from the caller (a driver whose connection closed under
   * it), as a StoreError too. A store call never ends its caller's fiber.
   */
  const settle =
    (operation: string) =>
    <A, E>(exit: Exit.Exit<A, E>): Effect.Effect<A, E | StoreError> => {
      if (Exit.isSuccess(exit)) return exit
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error)) return Effect.fail(error.value)
      const defect = Cause.findDefect(exit.cause)
      return Effect.fail(
        Result.isSuccess(defect)
          ? Failure.storeError(operation, defect.success)
          : new StoreError({
              operation,
              reason: "connection-lost",
              detail: "the driver interrupted the operation",
              message: `the task store failed to ${operation}: ${Failure.headline["connection-lost"]}: the driver interrupted the operation`,
            }),
      )
    }
  /**
   * Runs `self` on a fiber of its own and waits at most `deadlineMs` for it. On timeout the
   * fiber is interrupted in the background (the driver cancels the statement and retires the
   * connection if it does not answer) and the caller gets a `timeout` StoreError at once.
   */
  const deadline =
    (operation: string) =>
    <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      deadlineMs === undefined
        ? Effect.flatMap(Effect.exit(self), settle(operation))
        : Effect.uninterruptibleMask((restore) =>
            Effect.gen(function* () {
              const fiber = yield* Effect.forkDetach(self, { startImmediately: true })
              const abandon = Effect.asVoid(Effect.forkDetach(Fiber.interrupt(fiber)))
              const exit = yield* restore(Fiber.await(fiber)).pipe(
                Effect.timeoutOption(deadlineMs),
                Effect.onInterrupt(() => abandon),
              )
              if (Option.isSome(exit)) return yield* settle(operation)(exit.value)
              yield* abandon
              return yield* new StoreError({
                operation,
                reason: "timeout",
                detail: `no answer within ${deadlineMs} ms`,
                message: `the task store failed to ${operation}: ${Failure.headline.timeout}: no answer within ${deadlineMs} ms`,
              })
            }),
          )

  return deadline
}
