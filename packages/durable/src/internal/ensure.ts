/**
 * @internal
 * Declared tasks on stored rows (SPEC §18). The decision is the core's (`Declared.decide`): this
 * module only reads the rows a declaration names, maps them to the core's `Definition`, and
 * writes what the decision says — an insert, an update in the row's own transaction (decided
 * again on the row as locked there, so concurrent processes never lose an update), or nothing.
 *
 * Order: every declaration is validated and every row read and decided before the first write,
 * so a bad declaration changes nothing. Each write is then its own transaction: a process that
 * loses a race for a create (`DuplicateTaskId`) or an update (the row is final by then) reads
 * the row again and decides again, at most {@link ATTEMPTS} times.
 */
import { Declared, Errors, Retry, Rules, Schedule, type Task } from "@tickwork/core"
import { Effect, Option, Result } from "effect"
import type { DurableScheduleError, StoreError } from "../Errors.ts"
import type { NewTask, TaskRow } from "../TaskStore.ts"
import type { TaskOptions } from "./accept.ts"
import * as Breakers from "./breakers.ts"
import * as Controls from "./controls.ts"
import type { Env } from "./env.ts"
import * as Events from "./events.ts"
import { optionError } from "./options.ts"

/** Reads and decisions one declaration may take when other processes write the same id. */
const ATTEMPTS = 5
/** Rows read per page when the set's members are listed. */
const PAGE = 500

const PRIORITIES = ["high", "normal", "low"] as const

/** What `ensure` needs from the scheduler: its checks, its insert and its cancel. */
export interface Deps {
  readonly prepare: (
    o: TaskOptions,
    now: number,
  ) => NewTask | Exclude<DurableScheduleError, StoreError>
  readonly insert: (task: NewTask, now: number) => Effect.Effect<unknown, DurableScheduleError>
  readonly cancel: (id: string) => Effect.Effect<boolean, StoreError>
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
      const o: TaskOptions = { ...given, tags: Declared.tagsOf(given.tags, set) }
      const t = deps.prepare(o, now)
      if (!("slot" in t)) return yield* Effect.fail(t)
      items.push({ o, t, d: declaredDefinition(o, t) })
    }
    const decideOn = (row: TaskRow, d: Declared.Definition) =>
      Declared.decide(d, rowDefinition(row, now, own))
    for (let k = 0; k < items.length; k++) {
      const { o, d } = items[k] as (typeof items)[number]
      const row = yield* env.store.get(o.id as string)
      if (Option.isNone(row)) continue
      if (row.value.breaker !== null) yield* loadOwn
      const decision = decideOn(row.value, d)
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
    // ---- apply: each task in its own transaction, decided again on the row as it is ----
    const created: Array<Task.TaskId> = []
    const updated: Array<{ id: Task.TaskId; fields: ReadonlyArray<Declared.Field> }> = []
    const unchanged: Array<Task.TaskId> = []
    for (const { o, t, d } of items) {
      const id = o.id as Task.TaskId
      for (let attempt = 1; ; attempt++) {
        const found = yield* env.store.get(id)
        if (Option.isSome(found) && found.value.breaker !== null) yield* loadOwn
        const decision = Option.isNone(found)
          ? Declared.decide(d, undefined)
          : decideOn(found.value, d)
        if (decision._tag === "unchanged") {
          unchanged.push(id)
          break
        }
        if (decision._tag === "create") {
          const inserted = yield* deps.insert({ ...t, seq: env.nextSeq(), now }, now).pipe(
            Effect.as(true),
            Effect.catchTag("DuplicateTaskId", (e) =>
              attempt < ATTEMPTS ? Effect.succeed(false) : Effect.fail(e),
            ),
          )
          if (inserted) {
            created.push(id)
            break
          }
          continue // another process created it: read it again
        }
        let fields: ReadonlyArray<Declared.Field> = []
        const resolved = { ...o, timeout: t.timeoutMs }
        const wrote = yield* env.store.modify<Controls.UpdateError>(
          id,
          (row) => {
            const again = decideOn(row, d)
            if (again._tag !== "update") return undefined
            fields = updateFields(again.fields)
            const changes = Declared.changesOf(resolved, updateFields(again.fields))
            const m = Controls.decideUpdate(env, row, changes as Controls.Changes, now)
            if ("rejected" in m) return m
            const event = Events.make("updated", row, now, env.owner, {
              detail: again.fields.join(", "),
              cause: "ensure",
            })
            return { ...m, events: [...m.events, event] }
          },
          env.publish,
        )
        if (wrote) {
          updated.push({ id, fields })
          break
        }
        if (attempt >= ATTEMPTS) {
          // Decided again on the locked row: it matched by then (another process wrote it).
          unchanged.push(id)
          break
        }
      }
    }
    // ---- a named set: its live tasks no longer declared are cancelled ----
    const cancelled: Array<Task.TaskId> = []
    if (set !== undefined) {
      const members: Array<string> = []
      let after: string | undefined
      for (;;) {
        const rows = yield* env.store.list({ tag: set, after, limit: PAGE })
        for (const r of rows)
          if (r.state === "scheduled" || r.state === "running" || r.state === "paused")
            members.push(r.id)
        if (rows.length < PAGE) break
        after = (rows[rows.length - 1] as TaskRow).id
      }
      const ids = items.map((x) => x.o.id as string)
      for (const id of Declared.undeclared(members, ids)) {
        if (yield* deps.cancel(id)) cancelled.push(id as Task.TaskId)
      }
    }
    if (created.length > 0 || updated.length > 0) env.wakeup.wake()
    return { created, updated, unchanged, cancelled }
  })
