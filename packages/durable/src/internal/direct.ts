/**
 * @internal
 * SQLite statements run straight on the better-sqlite3 connection, under the client's own
 * rules: the statement of a fiber in a transaction runs on it at once; any other takes the
 * client's one permit first, so it never lands inside another fiber's transaction.
 *
 * Why: a `schedule()` is one single-row statement, and effect/sql's statement layer (a span, the
 * statement's compile, the borrow) cost about 8 µs of CPU time per call, as much as a third of
 * the whole call, on a 2-core machine (2026-12-02). Spans are all that path adds that anyone
 * could see: under a tracer other than Effect's native one (which records nothing), every
 * statement takes effect/sql's path, so each still has its span.
 */
import { Context, Effect, Option, type Semaphore, Tracer } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** What the SQLite client gives: its permit, its transaction state and its statement runner. */
export interface Runner {
  /** The client's one permit (held by a statement, or by a transaction until it ends). */
  readonly semaphore: Semaphore.Semaphore
  /** Whether the connection has a transaction open (better-sqlite3's `inTransaction`). */
  readonly inTransaction: () => boolean
  /** Runs a prepared (cached) statement: a reader's rows as objects, a writer's none. */
  readonly execute: (
    text: string,
    params: ReadonlyArray<unknown>,
  ) => Effect.Effect<Array<Record<string, unknown>>, SqlError>
}

const runners = new WeakMap<SqlClient, Runner>()

/** Lets {@link statement} run `client`'s statements on `runner` (by `SqliteClient.make`). */
export const register = (client: SqlClient, runner: Runner): void => {
  runners.set(client, runner)
}

/** A transaction left open outside any fiber's transaction: effect/sql's path rolls it back. */
const dangling = Symbol("dangling")

/**
 * `text` with `params` (as better-sqlite3 takes them) on `sql`: straight on the connection when
 * `sql` is a registered SQLite client and no tracer records spans, else `sql.unsafe`. Outside
 * a transaction, an open one found under the permit is another fiber's failed COMMIT cleanup
 * (SQLite may keep a transaction open after COMMIT fails): effect/sql's path rolls it back
 * before its statement, so the statement goes that way.
 */
export const statement = <A extends object>(
  sql: SqlClient,
  text: string,
  params: ReadonlyArray<unknown>,
): Effect.Effect<ReadonlyArray<A>, SqlError> => {
  const runner = runners.get(sql)
  if (runner === undefined) return sql.unsafe<A>(text, params)
  return Effect.withFiber((fiber) => {
    if (fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) return sql.unsafe<A>(text, params)
    const run = runner.execute(text, params) as Effect.Effect<Array<A>, SqlError>
    // This fiber's transaction holds the permit and the connection: its statements run on it.
    if (Option.isSome(Context.getOption(fiber.context, sql.transactionService))) return run
    const guarded: Effect.Effect<Array<A> | typeof dangling, SqlError> =
      runner.semaphore.withPermit(
        Effect.suspend(
          (): Effect.Effect<Array<A> | typeof dangling, SqlError> =>
            runner.inTransaction() ? Effect.succeed(dangling) : run,
        ),
      )
    return Effect.flatMap(guarded, (rows) =>
      rows === dangling ? sql.unsafe<A>(text, params) : Effect.succeed(rows),
    )
  })
}
