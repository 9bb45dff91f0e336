/**
 * @internal
 * The claim under flow control (SPEC §20): due rows are read in SPEC §4's order and each starts
 * only when core's `Rules.admit` says every scope it is in has room. The store only gathers what
 * the rule needs — each scope's running rows (a lease still live) and its recent starts — and
 * serializes the decision per scope: on PostgreSQL a transaction-scoped advisory lock on each
 * scope it reads (taken with `try`, so two claimers never wait on each other: a scope another
 * process is deciding right now is left to it), so the fleet's claims of one scope decide one
 * after the other on counts that include each other's commits. A row that must wait stays due,
 * its wait recorded on the row; the rows of other scopes behind it are still claimed.
 */
import { Rules } from "@tickwork/core"
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { num, type Raw, strOrNull } from "./codec.ts"
import * as Fleet from "./fleet.ts"
import type { ClaimOptions } from "./model.ts"

/** The advisory locks' first key for scopes: "ticl" in ASCII (the fleet's owners use "tick"). */
export const SCOPE_LOCK_CLASS = 0x7469636c

/** Pages of due rows a claim reads at most: bounds its cost when many rows wait. */
const MAX_PAGES = 8

/** Whether `limits` limits anything: without, the plain claim applies. */
export const limiting = (limits: Rules.ResolvedLimits | undefined): boolean =>
  limits !== undefined &&
  (limits.groups.size > 0 || limits.keys !== undefined || (limits.handlers?.size ?? 0) > 0)

/**
 * The scopes of a row that `limits` limits (SPEC §20; core's names and `Rules.limitOf`). A
 * group or key this process does not declare limits nothing here: every process of a fleet is
 * given the same limits.
 */
export const scopesOfRow = (
  limits: Rules.ResolvedLimits,
  handler: string,
  group: string | null,
  key: string | null,
): ReadonlyArray<string> => {
  const names = [`handler:${handler}`]
  if (group !== null) names.push(`group:${group}`)
  if (key !== null) names.push(`key:${key}`)
  return names.filter((s) => Rules.limitOf(limits, s) !== undefined)
}

/** The longest rate window of `limits`, ms (0: no rate limit): starts older are pruned. */
export const longestWindow = (limits: Rules.ResolvedLimits): number => {
  let per = limits.keys?.ratePerMs ?? 0
  for (const l of limits.groups.values()) per = Math.max(per, l.ratePerMs)
  for (const l of limits.handlers?.values() ?? []) per = Math.max(per, l.ratePerMs)
  return per
}

/**
 * Where the pruner may cut each scope's recorded starts at `now` (retention cut-off `before`):
 * never inside the scope's own window, so a rate window longer than the retention holds.
 */
export const startCutoffs = (
  limits: Rules.ResolvedLimits,
  now: number,
  before: number,
): { readonly keys: number; readonly scopes: ReadonlyArray<readonly [string, number]> } => {
  const cut = (l: Rules.ResolvedLimit | undefined) => Math.min(before, now - (l?.ratePerMs ?? 0))
  const scopes: Array<readonly [string, number]> = []
  for (const [prefix, named] of [
    ["group:", limits.groups],
    ["handler:", limits.handlers ?? new Map<string, Rules.ResolvedLimit>()],
  ] as const) {
    for (const [name, l] of named) if (cut(l) < before) scopes.push([`${prefix}${name}`, cut(l)])
  }
  return { keys: cut(limits.keys), scopes }
}

interface Candidate {
  readonly id: string
  readonly fence: number
  readonly scopes: ReadonlyArray<string>
  readonly waitCause: string | null
  readonly waitScope: string | null
  readonly waitUntil: number | null
}

/** A scope's load as read in this transaction, then counted on as this claim admits runs. */
interface Load {
  readonly limit: Rules.ResolvedLimit
  running: number
  starts: Array<number>
}

/** The column a scope's prefix names: its rows are counted by it. */
const columnOf = (scope: string): "handler" | "task_group" | "task_key" =>
  scope.startsWith("handler:") ? "handler" : scope.startsWith("group:") ? "task_group" : "task_key"

const nameOf = (scope: string) => scope.slice(scope.indexOf(":") + 1)

/**
 * The ids of the rows to claim among the due ones (at most `o.limit`), deciding and recording
 * the waits of those passed over, and recording the starts of rate-limited scopes. Runs inside
 * the claim's transaction; `o.limits` limits something.
 */
export const admitDue = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  o: ClaimOptions,
  live: boolean,
): Effect.Effect<ReadonlyArray<string>, unknown> =>
  Effect.gen(function* () {
    const limits = o.limits as Rules.ResolvedLimits
    const pageSize = Math.max(o.limit * 4, 64)
    const loads = new Map<string, Load>()
    // Scopes another process is deciding now (PostgreSQL): their rows are left to it.
    const busy = new Set<string>()
    // Scopes with no room in this pass (`now` is fixed): later pages leave their rows out.
    const full = new Set<string>()
    const admitted: Array<string> = []
    /** The rows passed over, with their scopes' loads (which later admissions keep counting on). */
    const passed: Array<{ readonly c: Candidate; readonly scoped: ReadonlyArray<Load> }> = []
    const rateStarts: Array<{ scope: string; at: number }> = []
    let after: { dueAt: number; priority: number; seq: number; id: string } | undefined
    for (let page = 0; page < MAX_PAGES && admitted.length < o.limit; page++) {
      const skip = [...busy, ...full]
      const left = (column: "handler" | "task_group" | "task_key") => {
        const names = skip.filter((s) => columnOf(s) === column).map(nameOf)
        if (names.length === 0) return sql``
        return column === "handler"
          ? sql` AND handler NOT IN ${sql.in(names)}`
          : sql` AND (${sql(column)} IS NULL OR ${sql(column)} NOT IN ${sql.in(names)})`
      }
      const raw = yield* sql<Raw>`
        SELECT id, fence, handler, task_group, task_key, due_at, priority, seq,
          wait_cause, wait_scope, wait_until
        FROM tickwork_tasks
        WHERE state IN ('scheduled', 'running') AND due_at <= ${o.now}
          AND handler IN ${sql.in(o.handlers)}${live ? Fleet.ownLockHeld(sql, o.owner) : sql``}
          ${left("handler")}${left("task_group")}${left("task_key")}
          ${
            after === undefined
              ? sql``
              : sql`AND (due_at, priority, seq, id) > (${after.dueAt}, ${after.priority}, ${after.seq}, ${after.id})`
          }
        ORDER BY due_at, priority, seq, id LIMIT ${pageSize}
        ${dialect === "pg" ? sql`FOR UPDATE SKIP LOCKED` : sql``}`
      if (raw.length === 0) break
      const last = raw[raw.length - 1] as Raw
      after = {
        dueAt: num(last.due_at),
        priority: num(last.priority),
        seq: num(last.seq),
        id: String(last.id),
      }
      const candidates: Array<Candidate> = raw.map((r) => ({
        id: String(r.id),
        fence: num(r.fence),
        scopes: scopesOfRow(
          limits,
          String(r.handler),
          strOrNull(r.task_group),
          strOrNull(r.task_key),
        ),
        waitCause: strOrNull(r.wait_cause),
        waitScope: strOrNull(r.wait_scope),
        waitUntil: r.wait_until === null || r.wait_until === undefined ? null : num(r.wait_until),
      }))
      const fresh = [
        ...new Set(
          candidates.flatMap((c) => c.scopes.filter((s) => !loads.has(s) && !busy.has(s))),
        ),
      ]
      if (fresh.length > 0) yield* load(sql, dialect, limits, o.now, fresh, loads, busy)
      for (const c of candidates) {
        if (admitted.length >= o.limit) break
        if (c.scopes.some((s) => busy.has(s))) continue
        const scoped = c.scopes.map((s) => loads.get(s) as Load)
        const decision = Rules.admit(scoped, o.now)
        if (decision._tag === "Start") {
          admitted.push(c.id)
          for (let k = 0; k < scoped.length; k++) {
            const l = scoped[k] as Load
            l.running++
            if (l.limit.ratePerMs > 0) {
              l.starts.push(o.now)
              rateStarts.push({ scope: c.scopes[k] as string, at: o.now })
            }
          }
          continue
        }
        full.add(c.scopes[decision.scope] as string)
        passed.push({ c, scoped })
      }
      if (raw.length < pageSize) break
    }
    // Each wait is decided once this claim's admissions all count: a row passed over before a
    // later one took the last place of one of its scopes waits on that scope now (a concurrency
    // wait is decided before a rate wait, SPEC §20.2), as the kernel shows it. Loads only grow
    // within a claim, so a row passed over still waits.
    for (const { c, scoped } of passed) {
      const decision = Rules.admit(scoped, o.now)
      if (decision._tag === "Start") continue
      const scope = c.scopes[decision.scope] as string
      const until = decision.cause === "rate-limited" ? decision.until : null
      // Written only when it changed: a row waiting for long is not rewritten at every claim.
      if (c.waitCause === decision.cause && c.waitScope === scope && c.waitUntil === until) continue
      yield* sql`UPDATE tickwork_tasks SET wait_cause = ${decision.cause}, wait_scope = ${scope},
        wait_since = COALESCE(wait_since, ${o.now}), wait_until = ${until}
        WHERE id = ${c.id} AND fence = ${c.fence}`
    }
    if (Arr.isArrayNonEmpty(rateStarts)) {
      // At most `claimBatch` × 3 rows of 2 columns: within both engines' parameter limits.
      yield* sql`INSERT INTO tickwork_scope_starts ${sql.insert(rateStarts)}`
      // Starts older than every window count for nothing: the scopes written here drop theirs.
      const scopes = [...new Set(rateStarts.map((s) => s.scope))]
      yield* sql`DELETE FROM tickwork_scope_starts WHERE scope IN ${sql.in(scopes)}
        AND at <= ${o.now - longestWindow(limits)}`
    }
    return admitted
  })

/**
 * Reads the load of each scope in `scopes` into `loads`; on PostgreSQL each is locked first
 * (`busy` gets those another transaction holds). A scope's running rows are those whose lease
 * is live (`due_at > now`): a run whose process died counts until its lease lapses and the row
 * is due again. A row cancelled while it runs keeps its lease (its run finishes) and counts.
 */
const load = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  limits: Rules.ResolvedLimits,
  now: number,
  scopes: ReadonlyArray<string>,
  loads: Map<string, Load>,
  busy: Set<string>,
) =>
  Effect.gen(function* () {
    let mine = scopes
    if (dialect === "pg") {
      // Locked in one statement; `try`: a scope held elsewhere is skipped, never waited on, so
      // two claimers taking scopes in different orders cannot deadlock.
      // The names go as one JSON parameter: any key's text, no statement built from it.
      const locks = yield* sql<Raw>`
        SELECT s AS scope, pg_try_advisory_xact_lock(${SCOPE_LOCK_CLASS}, hashtext(s)) AS held
        FROM json_array_elements_text(${JSON.stringify(scopes)}::json) AS s`
      const held = new Set(locks.filter((r) => r.held === true).map((r) => String(r.scope)))
      for (const s of scopes) if (!held.has(s)) busy.add(s)
      mine = scopes.filter((s) => held.has(s))
    }
    for (const s of mine) {
      loads.set(s, {
        limit: Rules.limitOf(limits, s) as Rules.ResolvedLimit,
        running: 0,
        starts: [],
      })
    }
    if (mine.length === 0) return
    for (const column of ["handler", "task_group", "task_key"] as const) {
      const names = mine.filter((s) => columnOf(s) === column).map(nameOf)
      if (names.length === 0) continue
      const prefix = column === "handler" ? "handler:" : column === "task_group" ? "group:" : "key:"
      const counts = yield* sql<Raw>`
        SELECT ${sql(column)} AS name, COUNT(*) AS n FROM tickwork_tasks
        WHERE ${sql(column)} IN ${sql.in(names)} AND due_at > ${now}
          AND (state = 'running' OR (state = 'cancelled' AND lease_owner IS NOT NULL))
        GROUP BY ${sql(column)}`
      for (const r of counts) {
        const l = loads.get(`${prefix}${String(r.name)}`)
        if (l !== undefined) l.running = num(r.n)
      }
    }
    const rated = mine.filter((s) => (loads.get(s) as Load).limit.ratePerMs > 0)
    if (rated.length > 0) {
      const starts = yield* sql<Raw>`
        SELECT scope, at FROM tickwork_scope_starts
        WHERE scope IN ${sql.in(rated)} AND at > ${now - longestWindow(limits)}
        ORDER BY scope, at`
      for (const r of starts) loads.get(String(r.scope))?.starts.push(num(r.at))
    }
  })
