/**
 * @internal
 * Circuit breakers on stored rows (SPEC §7). A breaker's row in `tickwork_breakers` is shared
 * by every process of a fleet, so it is read (locked, on PostgreSQL) and written only inside the
 * transaction of the step that moves it: a completion whose slot ended, the half-open step after
 * the cool-down, a task joining or leaving it. Every decision is the core's: `Breaker.step` plans each
 * whole step (the new status, the tasks to hold and unhold, the probe) and `Rules.resume` each
 * unheld task's slot; this module reads the rows a plan needs and writes what it says.
 */
import { Breaker } from "@tickwork/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { decodeBreaker, decodeRow, type Raw } from "./codec.ts"
import * as Events from "./events.ts"
import type { BreakerRow, EventEntry, TaskRow } from "./model.ts"
import * as Rows from "./rows.ts"
import * as Write from "./write.ts"

/** What the breaker steps need besides the rows: the transaction's client and a push order. */
export interface Tx {
  readonly sql: SqlClient
  readonly dialect: "sqlite" | "pg"
  /** Push order (SPEC §4) for a task resumed to `scheduled`. */
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
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, define's result is not read
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

/** Breaker row `b` as the core's `Breaker.step` reads it. */
const cellOf = (b: BreakerRow): Breaker.Cell => ({
  status: { state: b.state, failures: b.failures, opens: b.opens },
  policy: b.policy,
  shared: b.shared,
  probe: b.probe ?? undefined,
})

/** Task row `row` as a breaker member (its resume slot is read only when it is held). */
const memberOf = (row: TaskRow, now: number): Breaker.Member => {
  // Stryker disable next-line LogicalOperator: equivalent, Breaker.step reads resumeAt only for held members
  const held = row.state === "paused" && row.pausedReason === "breaker"
  return {
    id: row.id,
    state: row.state,
    pausedReason: row.state === "paused" ? (row.pausedReason ?? undefined) : undefined,
    pauseRequest: row.state === "running" ? (row.pausedReason ?? undefined) : undefined,
    rank: row.priority,
    // The window does not move a resume: the layer's is not needed here.
    resumeAt: held ? Rows.resume(row, Number.POSITIVE_INFINITY, now, 0).update.runAt : 0,
  }
}

/** The live task rows of breaker `key`, by id. */
const liveRows = (tx: Tx, key: string) =>
  Effect.map(
    tx.sql<Raw>`SELECT * FROM tickwork_tasks WHERE breaker = ${key}
      AND state IN ('scheduled', 'running', 'paused') ORDER BY id`,
    (rows) => rows.map(decodeRow),
  )

/** Holds task `row` (reason `breaker`): paused when scheduled, asked to pause when running. */
const holdTask = (
  tx: Tx,
  row: Pick<TaskRow, "id" | "generation" | "slot" | "fence" | "state">,
  now: number,
) =>
  Effect.gen(function* () {
    if (row.state === "scheduled") {
      yield* tx.sql`UPDATE tickwork_tasks SET state = 'paused', paused_reason = 'breaker',
        updated_at = ${now} WHERE id = ${row.id} AND state = 'scheduled'`
      return [Events.make("paused", row, now, tx.owner, { cause: "breaker" })]
    }
    if (row.state === "running") {
      yield* tx.sql`UPDATE tickwork_tasks SET paused_reason = 'breaker', updated_at = ${now}
        WHERE id = ${row.id} AND state = 'running' AND paused_reason IS NULL`
    }
    return [] as Array<EventEntry>
  })

/** Unholds task `row`: resumed when held, its breaker's pause request withdrawn while it runs. */
const unholdTask = (tx: Tx, row: TaskRow, now: number) =>
  Effect.gen(function* () {
    if (row.state === "running") {
      yield* tx.sql`UPDATE tickwork_tasks SET paused_reason = NULL, updated_at = ${now}
        WHERE id = ${row.id} AND state = 'running' AND paused_reason = 'breaker'`
      return [] as Array<EventEntry>
    }
    return yield* resumeTask(tx, row, now)
  })

/**
 * Decides `event` on breaker row `b` with the core's `Breaker.step` and applies the plan: the
 * breaker row, the transition's event (`task`: the task whose slot moved it, `detail`: why), the
 * holds and unholds. `joining` is the joining task (a `Joined` step reads no other row).
 */
const step = (
  tx: Tx,
  b: BreakerRow,
  event: Breaker.Event,
  now: number,
  options: {
    readonly task?: Pick<TaskRow, "id" | "generation" | "slot" | "fence" | "state"> | undefined
    readonly joining?: Pick<TaskRow, "id" | "generation" | "slot" | "fence" | "state"> | undefined
    readonly detail?: ((plan: Breaker.Plan) => string) | undefined
  } = {},
): Effect.Effect<ReadonlyArray<EventEntry>, SqlError> =>
  Effect.gen(function* () {
    const cell = cellOf(b)
    const rows = new Map<string, TaskRow>()
    // Stryker disable next-line ArrayDeclaration: equivalent, a member that is no task row (no id, no state) is never held, unheld or the probe
    const members: Array<Breaker.Member> = []
    const joining = options.joining
    if (joining !== undefined) {
      members.push({
        id: joining.id,
        state: joining.state,
        pausedReason: undefined,
        pauseRequest: undefined,
        rank: 1,
        resumeAt: 0,
      })
    } else if (Breaker.readsMembers(cell, event)) {
      for (const row of yield* liveRows(tx, b.key)) {
        rows.set(row.id, row)
        members.push(memberOf(row, now))
      }
    }
    const plan = Breaker.step(cell, event, members, now)
    if (plan.drop) {
      yield* tx.sql`DELETE FROM tickwork_breakers WHERE key = ${b.key}`
      return []
    }
    const t = plan.transition
    const probeRow =
      plan.probe === undefined
        ? undefined
        : plan.probe === joining?.id
          ? joining
          : plan.probe === b.probe
            ? { generation: b.probeGeneration as number }
            : rows.get(plan.probe)
    const saved: BreakerRow = {
      ...b,
      ...plan.status,
      openedAt: t?.to === "open" ? now : b.openedAt,
      halfOpenAt:
        t === undefined ? b.halfOpenAt : t.to === "open" ? (t.halfOpenAt as number) : null,
      probe: plan.probe ?? null,
      probeGeneration: probeRow?.generation ?? null,
    }
    const changed =
      t !== undefined ||
      saved.failures !== b.failures ||
      saved.probe !== b.probe ||
      saved.probeGeneration !== b.probeGeneration
    if (changed) yield* save(tx, saved, now)
    const events: Array<EventEntry> = []
    if (t !== undefined) {
      const subject = t.to === "half-open" ? (probeRow as TaskRow | undefined) : options.task
      events.push(
        // Stryker disable next-line OptionalChaining,StringLiteral: equivalent, only the slot and cool-down steps move a breaker's state, and both say why
        Events.breaker(b.name, t.from, t.to, subject, now, tx.owner, options.detail?.(plan) ?? ""),
      )
    }
    for (const id of plan.hold) {
      const row = id === joining?.id ? joining : rows.get(id)
      if (row !== undefined) events.push(...(yield* holdTask(tx, row, now)))
    }
    for (const id of plan.unhold) {
      const row = rows.get(id)
      if (row !== undefined) events.push(...(yield* unholdTask(tx, row, now)))
    }
    return events
  })

/**
 * Breaker `b` after a slot of `task` ended at `now` (`failed`: retries used up), as the core's
 * `Breaker.step` decides: an opening holds its other tasks, a closing unholds them. Returns the
 * events (the transition, tasks paused or resumed).
 */
export const afterSlot = (
  tx: Tx,
  b: BreakerRow,
  task: TaskRow,
  failed: boolean,
  now: number,
): Effect.Effect<ReadonlyArray<EventEntry>, unknown> =>
  step(tx, b, { _tag: "SlotEnded", task: task.id, failed }, now, {
    task,
    detail: (plan) =>
      // Stryker disable next-line OptionalChaining: equivalent, a detail is asked for only with a transition
      plan.transition?.to === "open"
        ? `slot ${task.slot} of task ${task.id} failed; cool-down ${plan.transition.coolDown} ms, half-open at ${plan.transition.halfOpenAt}`
        : `slot ${task.slot} of task ${task.id} succeeded`,
  })

/** Resumes a task its breaker held (`Rules.resume`), recording the slots that passed. */
export const resumeTask = (tx: Tx, row: TaskRow, now: number) =>
  Effect.gen(function* () {
    // The window does not move a resume: the layer's is not needed here.
    // With a manual run waiting, the resume moves the run it set aside (SPEC §19.1).
    const r = Rows.resume(row, Number.POSITIVE_INFINITY, now, tx.seq())
    const events: Array<EventEntry> = []
    if (r.skipped !== undefined)
      events.push(Events.paused(r.skipped, row, now, r.nextSlot, "breaker"))
    events.push(
      Events.make("resumed", { ...row, slot: r.slot }, now, tx.owner, {
        cause: "breaker",
        detail: `due at ${r.update.runAt}`,
      }),
    )
    const written = yield* Write.row(tx.sql, row, r.update)
    return written ? events : []
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
      const moved = yield* step(tx, decodeBreaker(raw), { _tag: "CoolDownEnded" }, now, {
        detail: (plan) =>
          plan.probe === undefined
            ? "cool-down ended; no held task to probe (the next task to come is the probe)"
            : `cool-down ended; task ${plan.probe} runs as the probe`,
      })
      events.push(...moved)
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
 * Task `task` (in `state`) joins breaker `key` (`Breaker.step`, `Joined`): nothing while it is
 * closed; the probe of a half-open breaker that has none; otherwise held.
 */
export const join = (
  tx: Tx,
  key: string,
  task: Pick<TaskRow, "id" | "generation" | "slot" | "fence" | "state">,
  now: number,
) =>
  Effect.gen(function* () {
    const b = yield* load(tx, key)
    if (b === undefined) return [] as ReadonlyArray<EventEntry>
    return yield* step(tx, b, { _tag: "Joined", task: task.id }, now, { joining: task })
  })

/**
 * Task `task` leaves breaker `key` (an update naming another breaker or none, a cancel): a
 * task's own breaker row goes; a shared half-open breaker whose probe it was lets another held
 * task through.
 */
export const leave = (tx: Tx, key: string, task: Pick<TaskRow, "id" | "generation">, now: number) =>
  Effect.gen(function* () {
    const b = yield* load(tx, key)
    if (b === undefined) return [] as ReadonlyArray<EventEntry>
    // The probe of an earlier generation of this id is not this task.
    const probe = isProbe(b, task) ? b : { ...b, probe: null, probeGeneration: null }
    return yield* step(tx, probe, { _tag: "Left", task: task.id }, now)
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
    if (b === undefined || !isProbe(b, task)) return [] as ReadonlyArray<EventEntry>
    return yield* step(tx, b, { _tag: "PausedByHand", task: task.id }, now)
  })

/** Every breaker row, by key. */
export const all = (sql: SqlClient) =>
  Effect.map(sql<Raw>`SELECT * FROM tickwork_breakers ORDER BY key`, (rows) =>
    rows.map(decodeBreaker),
  )
