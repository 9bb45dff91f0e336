/**
 * @internal
 * Circuit breakers on stored rows (SPEC §7). A breaker's row in `tickwork_breakers` is shared
 * by every process of a fleet, so it is read (locked, on PostgreSQL) and written only inside the
 * transaction of the step that moves it: a completion whose slot ended, the half-open step after
 * the cool-down, a task joining or leaving it. Every decision is the core's (`Breaker.afterSlot`,
 * `Breaker.opening`, `Breaker.onJoin`, `Breaker.probeBefore`, `Rules.pause`, `Rules.resume`);
 * this module reads and writes the rows those decisions concern.
 */
import { Breaker, Rules } from "@tickwork/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { decodeBreaker, decodeRow, type Raw } from "./codec.ts"
import * as Events from "./events.ts"
import type { BreakerRow, EventEntry, TaskRow } from "./model.ts"
import * as Rows from "./rows.ts"
import * as Write from "./write.ts"

/** What the breaker steps need besides the rows: the transaction's client and a push order. */
export interface Tx {
  readonly sql: SqlClient
  readonly dialect: "sqlite" | "pg"
  /** Push order (SPEC §4) for a task released to `scheduled`. */
  readonly seq: () => number
  /** The process recording the events. */
  readonly owner: string | null
}

/** The row key of a breaker defined on the layer. */
export const sharedKey = (name: string): string => `shared:${name}`
/** The row key of a task's own breaker. */
export const ownKey = (id: string): string => `task:${id}`

/** Reads a breaker's row, locked until the transaction ends on PostgreSQL. */
export const load = (tx: Tx, key: string) =>
  Effect.map(
    tx.dialect === "pg"
      ? tx.sql<Raw>`SELECT * FROM tickwork_breakers WHERE key = ${key} FOR UPDATE`
      : tx.sql<Raw>`SELECT * FROM tickwork_breakers WHERE key = ${key}`,
    (rows) => (rows[0] === undefined ? undefined : decodeBreaker(rows[0])),
  )

const save = (tx: Tx, b: BreakerRow, now: number) =>
  tx.sql`UPDATE tickwork_breakers SET state = ${b.state}, failures = ${b.failures},
    opens = ${b.opens}, opened_at = ${b.openedAt}, half_open_at = ${b.halfOpenAt},
    probe = ${b.probe}, probe_generation = ${b.probeGeneration}, updated_at = ${now}
    WHERE key = ${b.key}`

/**
 * Creates (or, for a shared one, re-defines the policy of) breaker rows; a task's own breaker
 * starts closed again when its id is reused.
 */
export const define = (
  tx: Tx,
  list: ReadonlyArray<{
    readonly key: string
    readonly name: string
    readonly shared: boolean
    readonly policy: Breaker.Resolved
  }>,
  now: number,
) =>
  Effect.forEach(
    list,
    (b) =>
      b.shared
        ? tx.sql`INSERT INTO tickwork_breakers ${tx.sql.insert(record(b, now))}
            ON CONFLICT (key) DO UPDATE SET policy = excluded.policy`
        : tx.sql`INSERT INTO tickwork_breakers ${tx.sql.insert(record(b, now))}
            ON CONFLICT (key) DO UPDATE SET policy = excluded.policy, state = 'closed',
              failures = 0, opens = 0, opened_at = NULL, half_open_at = NULL, probe = NULL,
              probe_generation = NULL, updated_at = excluded.updated_at`,
    { discard: true },
  )

const record = (
  b: {
    readonly key: string
    readonly name: string
    readonly shared: boolean
    readonly policy: Breaker.Resolved
  },
  now: number,
) => ({
  key: b.key,
  name: b.name,
  shared: b.shared ? 1 : 0,
  policy: JSON.stringify(b.policy),
  state: "closed",
  failures: 0,
  opens: 0,
  opened_at: null,
  half_open_at: null,
  probe: null,
  probe_generation: null,
  updated_at: now,
})

const isProbe = (b: BreakerRow, task: Pick<TaskRow, "id" | "generation">): boolean =>
  b.probe === task.id && b.probeGeneration === task.generation

/** Whether a failed slot of `task` opens breaker `b` (the rules' `breakerOpens` question). */
export const opensOnFailure = (b: BreakerRow, task: Pick<TaskRow, "id" | "generation">) =>
  Breaker.opensOnFailure(b, b.policy, isProbe(b, task))

/**
 * Breaker `b` after a slot of `task` ended at `now` (`failed`: retries used up), as
 * `Breaker.afterSlot` decides: an opening holds its other tasks, a closing releases them.
 * Returns the events (the transition, tasks paused or resumed).
 */
export const afterSlot = (
  tx: Tx,
  b: BreakerRow,
  task: TaskRow,
  failed: boolean,
  now: number,
): Effect.Effect<ReadonlyArray<EventEntry>, unknown> =>
  Effect.gen(function* () {
    const after = Breaker.afterSlot(b, b.policy, isProbe(b, task), failed)
    if (after.state === b.state) {
      if (after.failures !== b.failures) yield* save(tx, { ...b, failures: after.failures }, now)
      return []
    }
    if (after.state === "open") {
      const { coolDown, halfOpenAt } = Breaker.opening(b.policy, after.opens, now)
      yield* save(
        tx,
        { ...b, ...after, openedAt: now, halfOpenAt, probe: null, probeGeneration: null },
        now,
      )
      const event = Events.breaker(
        b.name,
        b.state,
        "open",
        task,
        now,
        tx.owner,
        `slot ${task.slot} of task ${task.id} failed; cool-down ${coolDown} ms, half-open at ${halfOpenAt}`,
      )
      return [event, ...(yield* hold(tx, b.key, task.id, now))]
    }
    yield* save(tx, { ...b, ...after, halfOpenAt: null, probe: null, probeGeneration: null }, now)
    const event = Events.breaker(
      b.name,
      b.state,
      after.state,
      task,
      now,
      tx.owner,
      `slot ${task.slot} of task ${task.id} succeeded`,
    )
    return [event, ...(yield* release(tx, b.key, task.id, now))]
  })

/**
 * Holds the live tasks of breaker `key` but `except` (`Rules.pause`): a scheduled one is paused
 * at once (reason `breaker`), a running one when its run ends; a task already paused (by hand,
 * its failure policy) stays as it is.
 */
export const hold = (tx: Tx, key: string, except: string | null, now: number) =>
  Effect.gen(function* () {
    const rows = yield* tx.sql<Raw>`SELECT id, generation, slot, state, fence, paused_reason
      FROM tickwork_tasks WHERE breaker = ${key} AND state IN ('scheduled', 'running')
      ORDER BY id`
    const events: Array<EventEntry> = []
    for (const r of rows) {
      const id = String(r.id)
      if (id === except) continue
      const state = String(r.state) as "scheduled" | "running"
      const decision = Rules.pause(state, state === "running" && r.paused_reason !== null)
      if (decision === "ignored") continue
      if (decision === "paused") {
        yield* tx.sql`UPDATE tickwork_tasks SET state = 'paused', paused_reason = 'breaker',
          updated_at = ${now} WHERE id = ${id} AND state = 'scheduled'`
        const subject = {
          id,
          generation: Number(r.generation),
          slot: Number(r.slot),
          fence: Number(r.fence),
        }
        events.push(Events.make("paused", subject, now, tx.owner, { cause: "breaker" }))
      } else {
        yield* tx.sql`UPDATE tickwork_tasks SET paused_reason = 'breaker', updated_at = ${now}
          WHERE id = ${id} AND state = 'running' AND paused_reason IS NULL`
      }
    }
    return events
  })

/** Resumes a task its breaker held (`Rules.resume`), recording the slots that passed. */
export const releaseTask = (tx: Tx, row: TaskRow, now: number) =>
  Effect.gen(function* () {
    // The window does not move a resume: the layer's is not needed here.
    const r = Rules.resume(Rows.view(row, Number.POSITIVE_INFINITY), now)
    const events: Array<EventEntry> = []
    if (r.skipped !== undefined) events.push(Events.paused(r.skipped, row, now, r.dueAt, "breaker"))
    events.push(
      Events.make("resumed", { ...row, slot: r.slot }, now, tx.owner, {
        cause: "breaker",
        detail: `due at ${r.dueAt}`,
      }),
    )
    const written = yield* Write.row(tx.sql, row, Rows.resumed(row, r, now, tx.seq()))
    return written ? events : []
  })

/**
 * Releases the tasks breaker `key` holds but `except`: each paused one resumes where the rules
 * say, a running one's pending hold is withdrawn.
 */
export const release = (tx: Tx, key: string, except: string | null, now: number) =>
  Effect.gen(function* () {
    const rows = yield* tx.sql<Raw>`SELECT * FROM tickwork_tasks WHERE breaker = ${key}
      AND state IN ('paused', 'running') AND paused_reason = 'breaker' ORDER BY id`
    const events: Array<EventEntry> = []
    for (const raw of rows) {
      const row = decodeRow(raw)
      if (row.id === except) continue
      if (row.state === "running") {
        yield* tx.sql`UPDATE tickwork_tasks SET paused_reason = NULL, updated_at = ${now}
          WHERE id = ${row.id} AND state = 'running' AND paused_reason = 'breaker'`
      } else events.push(...(yield* releaseTask(tx, row, now)))
    }
    return events
  })

/**
 * Lets the held task of breaker `b` that would run first through as its probe
 * (`Breaker.probeBefore`, ties by id); returns it (or `undefined`) and its events.
 */
const pickProbe = (tx: Tx, b: BreakerRow, now: number) =>
  Effect.gen(function* () {
    const rows = yield* tx.sql<Raw>`SELECT * FROM tickwork_tasks WHERE breaker = ${b.key}
      AND state = 'paused' AND paused_reason = 'breaker' ORDER BY id`
    let best: { row: TaskRow; dueAt: number; rank: number } | undefined
    for (const raw of rows) {
      const row = decodeRow(raw)
      const dueAt = Rules.resume(Rows.view(row, Number.POSITIVE_INFINITY), now).dueAt
      const candidate = { row, dueAt, rank: row.priority }
      if (best === undefined || Breaker.probeBefore(candidate, best)) best = candidate
    }
    if (best === undefined) return { probe: undefined, events: [] as Array<EventEntry> }
    return { probe: best.row, events: yield* releaseTask(tx, best.row, now) }
  })

/**
 * The half-open step at `now`: every open breaker whose cool-down has ended goes half-open and
 * lets one held task through as its probe. On PostgreSQL the rows are locked and re-checked, so
 * when several processes look at once, one of them moves each breaker.
 */
export const halfOpen = (tx: Tx, now: number) =>
  Effect.gen(function* () {
    const due =
      tx.dialect === "pg"
        ? yield* tx.sql<Raw>`SELECT * FROM tickwork_breakers
            WHERE state = 'open' AND half_open_at <= ${now} ORDER BY key FOR UPDATE SKIP LOCKED`
        : yield* tx.sql<Raw>`SELECT * FROM tickwork_breakers
            WHERE state = 'open' AND half_open_at <= ${now} ORDER BY key`
    const events: Array<EventEntry> = []
    for (const raw of due) {
      const b = decodeBreaker(raw)
      const { probe, events: released } = yield* pickProbe(tx, b, now)
      yield* save(
        tx,
        {
          ...b,
          state: "half-open",
          halfOpenAt: null,
          probe: probe?.id ?? null,
          probeGeneration: probe?.generation ?? null,
        },
        now,
      )
      events.push(
        Events.breaker(
          b.name,
          "open",
          "half-open",
          probe,
          now,
          tx.owner,
          probe === undefined
            ? "cool-down ended; no held task to probe (the next task to come is the probe)"
            : `cool-down ended; task ${probe.id} runs as the probe`,
        ),
        ...released,
      )
    }
    return events
  })

/** The earliest half-open time of an open breaker, epoch ms. */
export const nextHalfOpen = (sql: SqlClient) =>
  Effect.map(
    sql<Raw>`SELECT MIN(half_open_at) AS at FROM tickwork_breakers WHERE state = 'open'`,
    (rows) =>
      rows[0] === undefined || rows[0].at === null || rows[0].at === undefined
        ? undefined
        : Number(rows[0].at),
  )

/**
 * Task `task` (in `state`) joins breaker `key` (`Breaker.onJoin`): nothing while it is closed;
 * the probe of a half-open breaker that has none; otherwise held.
 */
export const join = (
  tx: Tx,
  key: string,
  task: Pick<TaskRow, "id" | "generation" | "slot" | "fence" | "state">,
  now: number,
) =>
  Effect.gen(function* () {
    const b = yield* load(tx, key)
    if (b === undefined) return [] as Array<EventEntry>
    const decision = Breaker.onJoin(b.state, b.probe !== null, task.state === "scheduled")
    if (decision === "none") return []
    if (decision === "probe") {
      yield* save(tx, { ...b, probe: task.id, probeGeneration: task.generation }, now)
      return []
    }
    const pause = Rules.pause(task.state, false)
    if (pause === "paused") {
      yield* tx.sql`UPDATE tickwork_tasks SET state = 'paused', paused_reason = 'breaker',
        updated_at = ${now} WHERE id = ${task.id} AND state = 'scheduled'`
      return [Events.make("paused", task, now, tx.owner, { cause: "breaker" })]
    }
    if (pause === "requested") {
      yield* tx.sql`UPDATE tickwork_tasks SET paused_reason = 'breaker', updated_at = ${now}
        WHERE id = ${task.id} AND state = 'running' AND paused_reason IS NULL`
    }
    return []
  })

/**
 * Task `task` leaves breaker `key` (an update naming another breaker or none, a cancel): a
 * task's own breaker row goes; a shared half-open breaker whose probe it was lets another held
 * task through.
 */
export const leave = (tx: Tx, key: string, task: Pick<TaskRow, "id" | "generation">, now: number) =>
  Effect.gen(function* () {
    const b = yield* load(tx, key)
    if (b === undefined) return [] as Array<EventEntry>
    if (!b.shared) {
      yield* tx.sql`DELETE FROM tickwork_breakers WHERE key = ${key}`
      return []
    }
    return yield* replaceProbe(tx, b, task, now)
  })

/**
 * Task `task` stays in breaker `key` but cannot be its probe (it was paused by hand): a
 * half-open breaker whose probe it was lets another held task through.
 */
export const unprobe = (
  tx: Tx,
  key: string,
  task: Pick<TaskRow, "id" | "generation">,
  now: number,
) =>
  Effect.gen(function* () {
    const b = yield* load(tx, key)
    return b === undefined ? ([] as Array<EventEntry>) : yield* replaceProbe(tx, b, task, now)
  })

/** If `task` is `b`'s probe, another held task probes instead (none while not half-open). */
const replaceProbe = (
  tx: Tx,
  b: BreakerRow,
  task: Pick<TaskRow, "id" | "generation">,
  now: number,
) =>
  Effect.gen(function* () {
    if (!isProbe(b, task)) return [] as Array<EventEntry>
    if (b.state !== "half-open") {
      yield* save(tx, { ...b, probe: null, probeGeneration: null }, now)
      return []
    }
    const { probe, events } = yield* pickProbe(tx, { ...b, probe: null }, now)
    yield* save(
      tx,
      { ...b, probe: probe?.id ?? null, probeGeneration: probe?.generation ?? null },
      now,
    )
    return events
  })

/** Every breaker row, by key. */
export const all = (sql: SqlClient) =>
  Effect.map(sql<Raw>`SELECT * FROM tickwork_breakers ORDER BY key`, (rows) =>
    rows.map(decodeBreaker),
  )
