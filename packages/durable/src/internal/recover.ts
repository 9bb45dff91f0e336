/**
 * @internal
 * The store's recovery: runs cut off by a crash handed back to `scheduled` (an exclusive store
 * reopened), and the claims of processes whose database session ended taken over (a shared
 * store, SPEC §17). Each is recorded as a `recovered` event.
 */
import { Rules } from "@tickwork/core"
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import { eventRecord, num, type Raw, strOrNull } from "./codec.ts"
import * as Events from "./events.ts"
import * as Failure from "./failure.ts"
import * as Fleet from "./fleet.ts"
import { CHUNK } from "./insert.ts"
import type { TakenOver } from "./model.ts"

// Core's HAND_BACK step (SPEC §5.5) decides by whether a pause was requested while the run was
// claimed (a running row's `paused_reason`): the request, if any, becomes the paused reason.
const UNREQUESTED = Rules.handBack(undefined).state
const REQUESTED = Rules.handBack("manual").state

/**
 * Hands every `running` row back (due again at its `run_at`, or held when a pause was requested
 * while it ran), recording a `recovered` event for
 * each: for an exclusive store when it is reopened (the runs it had in flight were cut off).
 * Returns how many.
 */
export const recover = (sql: SqlClient, now: number): Effect.Effect<number, StoreError> =>
  sql
    .withTransaction(
      Effect.gen(function* () {
        const rows = yield* sql<Raw>`
          UPDATE tickwork_tasks SET due_at = run_at, lease_owner = NULL, updated_at = ${now},
            state = CASE WHEN paused_reason IS NULL THEN ${UNREQUESTED} ELSE ${REQUESTED} END
          WHERE state = 'running'
          RETURNING id, generation, slot, attempt, fence, lease_owner, deliveries`
        for (const chunk of Arr.chunksOf(rows, CHUNK)) {
          yield* sql`INSERT INTO tickwork_events ${sql.insert(
            Arr.map(chunk, (r) =>
              eventRecord(
                Events.make(
                  "recovered",
                  {
                    id: String(r.id),
                    generation: num(r.generation),
                    slot: num(r.slot),
                    fence: num(r.fence),
                  },
                  now,
                  strOrNull(r.lease_owner),
                  { detail: `attempt ${num(r.attempt)}, delivery ${num(r.deliveries)}` },
                ),
              ),
            ),
          )}`
        }
        return rows.length
      }),
    )
    .pipe(Effect.mapError(Failure.failing("recover interrupted runs")))

/**
 * Makes due at once the claims of owners whose session ended (other than `owner`; `owner`'s own
 * too when `mine`), recording a `recovered` event for each; returns them (PostgreSQL).
 */
export const takeOver = (
  sql: SqlClient,
  owner: string,
  now: number,
  mine: boolean,
): Effect.Effect<ReadonlyArray<TakenOver>, StoreError> =>
  Effect.all([
    mine ? sql.withTransaction(Fleet.takeOver(sql, owner, now, [owner], true)) : Effect.succeed([]),
    Fleet.deadOwners(sql, owner, now).pipe(
      Effect.flatMap((dead) =>
        dead.length > 0
          ? sql.withTransaction(Fleet.takeOver(sql, owner, now, dead))
          : Effect.succeed([]),
      ),
    ),
  ]).pipe(
    Effect.map(([own, others]) => [...own, ...others]),
    Effect.mapError(Failure.failing("take over the claims of ended sessions")),
  )
