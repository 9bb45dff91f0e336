/**
 * @internal
 * Declared tasks on stored rows (SPEC §18). The decision is the core's (`Declared.decide`): this
 * module only reads the rows a declaration names, maps them to the core's `Definition`, and
 * writes what the decision says — an insert, an update in the row's own transaction (decided
 * again on the row as locked there, so concurrent processes never lose an update), or nothing.
 *
 * Order: every declaration is validated and every row read and decided before the first write,
 * so a bad declaration changes nothing. The writes are then one transaction (all or nothing,
 * SPEC §18.2): the rows of every declared task and of the set's members are locked in id order
 * (PostgreSQL), each decided again as locked, and written. A process that loses a race for a
 * create (`DuplicateTaskId`: another process inserted the id meanwhile) rolls the batch back and
 * applies it again, reading the rows anew, at most {@link ATTEMPTS} times.
 */
import { Declared, Errors, Retry, Rules, Schedule, type Task } from "@tickwork/core"
import { Effect, Option, Result } from "effect"
import type { DurableScheduleError, StoreError } from "../Errors.ts"
import type { NewTask, TaskRow } from "../TaskStore.ts"
import type { TaskOptions } from "./accept.ts"
import * as Breakers from "./breakers.ts"
import * as Controls from "./controls.ts"
import type { Env, Occurrence } from "./env.ts"
import * as Events from "./events.ts"
import { optionError } from "./options.ts"

/** Transactions one batch may take when other processes create the same ids at once. */
const ATTEMPTS = 5
/** Rows read per page when the set's members are listed. */
const PAGE = 500

const PRIORITIES = ["high", "normal", "low"] as const

/** What `ensure` needs from the scheduler: its checks and its insert. */
export interface Deps {
  readonly prepare: (
    o: TaskOptions,
    now: number,
  ) => NewTask | Exclude<DurableScheduleError, StoreError>
  readonly insert: (task: NewTask, now: number) => Effect.Effect<unknown, DurableScheduleError>
}

/** The errors of `ensure`: a bad declaration's, and the store's. */
export type EnsureError = DurableScheduleError | Controls.UpdateError

/** A task's own breaker's policy, or a shared breaker's key: what a definition compares. */
const breakerOfNew = (t: NewTask): string | undefined => t.breaker?.key

/** The definition of a declared task (its checked row `t`, its options `o`). */
const declaredDefinition = (o: TaskOptions, t: NewTask): Declared.Definition => {
  const plan = Result.getOrThrow(Schedule.decode(t.schedule)).plan
  return {
    plan,
    at: plan === undefined && o.schedule._tag === "At" ? t.slot : undefined,
    priority: PRIORITIES[t.priority] ?? "normal",
    retry: t.retry,
    missedRuns: t.missedRuns,
    pauseAfter: t.pauseAfter,
    tags: t.tags ?? [],
    windowMs: t.windowMs ?? Rules.NO_WINDOW,
    breaker: breakerOfNew(t),
    more: {
      handler: t.handler,
      payload: t.payload,
      timeout: t.timeoutMs,
      // A task's own breaker is compared by its policy too (its key is the task's id).
      ownBreaker: t.breaker?.key === Breakers.ownKey(t.id) ? t.breaker.policy : undefined,
    },
  }
}

/** The definition of a stored row at `now`; `own` is its own breaker's policy, if it has one. */
const rowDefinition = (
  row: TaskRow,
  now: number,
  own: ReadonlyMap<string, unknown>,
): Declared.Current => {
  let plan = row.plan
  let at: number | undefined = plan === undefined ? row.slot : undefined
  if (row.restart !== undefined) {
    // A schedule change waiting for the slot in progress is the task's schedule here.
    const r = Schedule.resolve(row.restart, now)
    if ("first" in r) {
      plan = r.plan
      at = r.plan === undefined ? r.first : undefined
    }
  }
  return {
    state: row.state,
    definition: {
      plan,
      at,
      priority: PRIORITIES[row.priority] ?? "normal",
      retry: row.retry ?? Retry.none,
      missedRuns: row.missedRuns,
      pauseAfter: row.pauseAfter,
      tags: row.tags,
      windowMs: row.windowMs ?? Rules.NO_WINDOW,
      breaker: row.breaker ?? undefined,
      more: {
        handler: row.handler,
        payload: row.payload,
        timeout: row.timeoutMs,
        ownBreaker: row.breaker === Breakers.ownKey(row.id) ? own.get(row.breaker) : undefined,
      },
    },
  }
}

/** The fields `update` is given for `fields` that the store's `update` knows by another name. */
const updateFields = (fields: ReadonlyArray<Declared.Field>): Array<Declared.Field> => [
  ...new Set(fields.map((f) => (f === "ownBreaker" ? "breaker" : f))),
]

/**
 * Makes the store's tasks match `declared` (SPEC §18): see the module's doc.
 */
export const ensure = (
  env: Env,
  deps: Deps,
  declared: ReadonlyArray<TaskOptions>,
  options: Declared.EnsureOptions | undefined,
): Effect.Effect<Declared.Report, EnsureError> =>
  Effect.gen(function* () {
    if (!Array.isArray(declared))
      return yield* Effect.fail(optionError("tasks", declared, "must be an array"))
    const set = options?.set
    const badBatch = Declared.checkBatch(
      declared.map((o) => (typeof o === "object" && o !== null ? o.id : undefined)),
      set,
    )
    if (badBatch !== undefined) return yield* Effect.fail(badBatch)
    const now = env.now()
    // ---- check every declaration, read and decide every row: nothing written yet ----
    const own = new Map<string, unknown>()
    let ownLoaded = false
    const loadOwn = Effect.gen(function* () {
      if (ownLoaded) return
      for (const v of yield* env.store.breakers) own.set(v.breaker.key, v.breaker.policy)
      ownLoaded = true
    })
    const items: Array<{ o: TaskOptions; t: NewTask; d: Declared.Definition }> = []
    for (let k = 0; k < declared.length; k++) {
      const given = declared[k] as TaskOptions
      // A declared task's id already keeps one task (SPEC §18, §20.3): a deduplication key could
      // only make `ensure` answer with another task's id.
      const dedup = (given as { readonly dedup?: unknown }).dedup
      if (dedup !== undefined) {
        return yield* Effect.fail(
          optionError("dedup", dedup, "is not taken by ensure: its id keeps one task"),
        )
      }
      const o: TaskOptions = { ...given, tags: Declared.tagsOf(given.tags, set) }
      const t = deps.prepare(o, now)
      if (!("slot" in t)) return yield* Effect.fail(t)
      items.push({ o, t, d: declaredDefinition(o, t) })
    }
    const decideOn = (row: TaskRow, d: Declared.Definition) =>
      Declared.decide(d, rowDefinition(row, now, own))
    let anyChange = false
    for (let k = 0; k < items.length; k++) {
      const { o, d } = items[k] as (typeof items)[number]
      const row = yield* env.store.get(o.id as string)
      if (Option.isNone(row)) {
        anyChange = true
        continue
      }
      if (row.value.breaker !== null) yield* loadOwn
      const decision = decideOn(row.value, d)
      if (decision._tag !== "unchanged") anyChange = true
      if (decision._tag === "update" && decision.fields.includes("handler")) {
        return yield* Effect.fail(
          optionError(
            `tasks[${k}].handler`,
            d.more.handler,
            `cannot change the handler of live task ${Errors.show(o.id)} (it runs ${Errors.show(row.value.handler)}): cancel it, or declare another id`,
          ),
        )
      }
    }
    // ---- a named set's live members: listed first, so that one lock takes every row ----
    const listMembers = Effect.gen(function* () {
      const members: Array<string> = []
      if (set === undefined) return members
      let after: string | undefined
      for (;;) {
        const rows = yield* env.store.list({ tag: set, after, limit: PAGE })
        for (const r of rows)
          if (r.state === "scheduled" || r.state === "running" || r.state === "paused")
            members.push(r.id)
        if (rows.length < PAGE) break
        after = (rows[rows.length - 1] as TaskRow).id
      }
      return members
    })
    const ids = items.map((x) => x.o.id as string)
    // Nothing to write (every task unchanged, no member to cancel): no transaction at all.
    if (
      !anyChange &&
      (set === undefined || Declared.undeclared(yield* listMembers, ids).length === 0)
    ) {
      return { created: [], updated: [], unchanged: ids as Array<Task.TaskId>, cancelled: [] }
    }
    const byId = new Map(items.map((x) => [x.o.id as string, x]))
    // ---- apply: one transaction, every row decided again as locked there ----
    const apply = Effect.gen(function* () {
      const created: Array<Task.TaskId> = []
      const updated: Array<{ id: Task.TaskId; fields: ReadonlyArray<Declared.Field> }> = []
      const unchanged: Array<Task.TaskId> = []
      const cancelled: Array<Task.TaskId> = []
      // Published once the transaction committed: a rolled-back batch happened nowhere.
      const events: Array<Occurrence> = []
      const undeclared = new Set(Declared.undeclared(yield* listMembers, ids))
      // One order for every row a batch touches (by id), the same in every process: two
      // processes applying overlapping declarations wait for each other, never deadlock.
      const order = [...new Set([...ids, ...undeclared])].sort()
      yield* env.store.lock(order)
      for (const id of order) {
        const item = byId.get(id)
        if (item === undefined) {
          const found = yield* env.store.cancel(id, now)
          if (Option.isSome(found)) {
            const c = found.value
            events.push(
              Events.make("cancelled", { id, ...c }, now, c.leaseOwner, { cause: c.from }),
            )
            cancelled.push(id as Task.TaskId)
          }
          continue
        }
        const { o, t, d } = item
        const found = yield* env.store.get(id)
        if (Option.isSome(found) && found.value.breaker !== null) yield* loadOwn
        const decision = Option.isNone(found)
          ? Declared.decide(d, undefined)
          : decideOn(found.value, d)
        if (decision._tag === "unchanged") {
          unchanged.push(id as Task.TaskId)
          continue
        }
        if (decision._tag === "create") {
          // Another process's create of this id, committed meanwhile, fails this insert with
          // `DuplicateTaskId`: the whole batch rolls back and is decided again.
          yield* deps.insert({ ...t, seq: env.nextSeq(), now }, now)
          created.push(id as Task.TaskId)
          continue
        }
        let fields: ReadonlyArray<Declared.Field> = []
        const resolved = { ...o, timeout: t.timeoutMs }
        const wrote = yield* env.store.modify<Controls.UpdateError>(
          id,
          (row) => {
            const again = decideOn(row, d)
            if (again._tag !== "update") return undefined
            // The report, the update and the ledger name the fields alike (`breaker`).
            fields = updateFields(again.fields)
            const changes = Declared.changesOf(resolved, fields)
            const m = Controls.decideUpdate(env, row, changes as Controls.Changes, now)
            if ("rejected" in m) return m
            const change = Declared.changeOf({ ensure: fields })
            const event = Events.updated(row, now, env.owner, change, m.update.slot ?? row.slot)
            return { ...m, events: [...m.events, event] }
          },
          (e) => events.push(e),
        )
        if (wrote) updated.push({ id: id as Task.TaskId, fields })
        // Decided again on the locked row: it matched by then (another process wrote it).
        else unchanged.push(id as Task.TaskId)
      }
      return { report: { created, updated, unchanged, cancelled }, events }
    })
    let applied: Effect.Success<typeof apply> | undefined
    for (let attempt = 1; applied === undefined; attempt++) {
      applied = yield* env.store
        .transaction(apply)
        .pipe(
          Effect.catchTag("DuplicateTaskId", (e) =>
            attempt < ATTEMPTS ? Effect.succeed(undefined) : Effect.fail(e),
          ),
        )
    }
    for (const e of applied.events) env.publish(e)
    // The report lists the declared ids in the order given.
    const r = applied.report
    const rank = new Map(ids.map((id, k) => [id, k]))
    const byRank = (a: string, b: string) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0)
    const created = [...r.created].sort(byRank)
    const updated = [...r.updated].sort((a, b) => byRank(a.id, b.id))
    const unchanged = [...r.unchanged].sort(byRank)
    const cancelled = r.cancelled
    if (created.length > 0 || updated.length > 0) env.wakeup.wake()
    return { created, updated, unchanged, cancelled }
  })
