/**
 * @internal
 * The store's breaker operations (SPEC §7): define the layer's shared breakers, read every
 * breaker with its tasks, and the half-open step the dispatcher runs when a cool-down ends. The
 * breaker steps themselves (and their decisions) are `breakers.ts`'s.
 */
import type { Breaker } from "@tickwork/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import * as Breakers from "./breakers.ts"
import type { Raw } from "./codec.ts"
import * as Failure from "./failure.ts"
import type { BreakerView, CommitContext, EventEntry } from "./model.ts"
import * as Write from "./write.ts"

/** Creates the layer's shared breakers (a policy given again replaces the stored one). */
export const defineBreakers = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  shared: ReadonlyArray<{ readonly name: string; readonly policy: Breaker.Resolved }>,
  now: number,
): Effect.Effect<void, StoreError> =>
  shared.length === 0
    ? Effect.void
    : sql
        .withTransaction(
          Breakers.define(
            { sql, dialect, seq: () => 0, owner: null },
            shared.map((b) => ({
              key: Breakers.sharedKey(b.name),
              name: b.name,
              shared: true,
              policy: b.policy,
            })),
            now,
          ),
        )
        .pipe(Effect.mapError(Failure.failing("define breakers")))

/** Every shared breaker and the own breakers of live tasks, with their live and held tasks. */
export const breakers = (sql: SqlClient): Effect.Effect<ReadonlyArray<BreakerView>, StoreError> =>
  Effect.gen(function* () {
    const rows = yield* Breakers.all(sql)
    const members = yield* sql<Raw>`SELECT id, breaker, state, paused_reason FROM tickwork_tasks
    WHERE breaker IS NOT NULL AND state IN ('scheduled', 'running', 'paused') ORDER BY id`
    const byKey = new Map<string, { tasks: Array<string>; held: Array<string> }>()
    for (const m of members) {
      const key = String(m.breaker)
      let v = byKey.get(key)
      if (v === undefined) {
        v = { tasks: [], held: [] }
        byKey.set(key, v)
      }
      v.tasks.push(String(m.id))
      if (m.state === "paused" && m.paused_reason === "breaker") v.held.push(String(m.id))
    }
    return rows.flatMap((breaker): Array<BreakerView> => {
      const v = byKey.get(breaker.key)
      // A task's own breaker is listed while its task lives.
      if (!breaker.shared && v === undefined) return []
      return [{ breaker, tasks: v?.tasks ?? [], held: v?.held ?? [] }]
    })
  }).pipe(Effect.mapError(Failure.failing("read the breakers")))

/**
 * The half-open step at `now` (SPEC §7), in one transaction: open breakers whose cool-down
 * ended go half-open and let a probe through. Returns the events written.
 */
export const halfOpen = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  now: number,
  context: CommitContext,
): Effect.Effect<ReadonlyArray<EventEntry>, StoreError> =>
  sql
    .withTransaction(
      Effect.gen(function* () {
        const events = yield* Breakers.halfOpen(
          { sql, dialect, seq: context.seq, owner: context.owner },
          now,
        )
        yield* Write.events(sql, events)
        return events
      }),
    )
    .pipe(Effect.mapError(Failure.failing("half-open breakers")))

/** The earliest half-open time of an open breaker (epoch ms; `undefined`: none). */
export const nextHalfOpen = (sql: SqlClient): Effect.Effect<number | undefined, StoreError> =>
  Breakers.nextHalfOpen(sql).pipe(
    Effect.mapError(Failure.failing("find the next half-open breaker")),
  )
