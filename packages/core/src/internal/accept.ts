/**
 * @internal
 * {@link acceptRow}: a validated task written into the kernel's rows (SPEC §4), replacing the
 * final task whose id it reuses.
 */
import type * as Breaker from "../Breaker.ts"
import { DuplicateTaskId, show } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Retry from "../Retry.ts"
import * as Rules from "../Rules.ts"
import type { TaskId } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import type { TaskOptions } from "./kernelTypes.ts"
import { type BreakerCell, Extras } from "./records.ts"
import type { Rows } from "./rows.ts"
import { formatId } from "./run.ts"
import { WALL_SLOT, WALL_TASK } from "./table.ts"

const { SCHEDULED } = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW

/**
 * @internal Accepts `options`, checked into `accepted` (and its breaker resolved into `breaker`),
 * at `now`, in a new row or in row `replacing` (-1: none), the final task whose id it reuses.
 * Nothing here can fail. Returns the task's id.
 */
export const acceptRow = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  options: TaskOptions<J>,
  accepted: Rules.Accepted,
  breaker: BreakerCell | Breaker.Resolved | undefined,
  replacing: number,
  now: number,
  // Stryker disable next-line ArrayDeclaration: equivalent, the kernel always passes the scopes
  scopes: ReadonlyArray<string> = [],
  dedup?: Rules.ResolvedDedup,
): TaskId => {
  const { rank, retry, missedRuns, pauseAfter, tags, windowMs, first, plan } = accepted
  const id = options.id
  const schedule = options.schedule
  let replaced = replacing
  rows.expire(now)
  // Expiring may just have evicted the final task that held this id: its row is then free and
  // already uncounted, so replacing it would count its removal twice.
  if (replaced >= 0 && !rows.present(replaced)) replaced = -1
  const i = replaced >= 0 ? rows.replace(replaced) : rows.allocate()
  let extra: Extras | undefined
  if (
    id !== undefined ||
    plan !== undefined ||
    retry !== Retry.none ||
    pauseAfter !== 0 ||
    // Stryker disable next-line StringLiteral: equivalent, default extras read as none (memory only)
    missedRuns !== "catch-up" ||
    tags.length !== 0 ||
    windowMs !== NO_WINDOW ||
    breaker !== undefined ||
    scopes.length !== 0 ||
    dedup !== undefined
  ) {
    extra = new Extras()
    extra.id = id
    extra.plan = plan
    extra.gridSlot = first
    extra.retry = retry
    extra.missedRuns = missedRuns
    extra.pauseAfter = pauseAfter
    extra.tags = tags
    extra.windowMs = windowMs
    if (scopes.length !== 0) extra.scopes = scopes
    extra.dedup = dedup
    if (id !== undefined) rows.ids.set(id, i)
  }
  rows.t.setJob(i, options.job)
  rows.t.setExtra(i, extra)
  rows.t.setState(i, SCHEDULED)
  rows.t.setRank(i, rank)
  rows.t.setSlot(i, first)
  rows.t.setAttempt(i, 1)
  rows.t.setRuns(i, 0)
  // `at`, cron and custom schedules name calendar instants; the rest count from a delay.
  // Stryker disable next-line OptionalChaining: equivalent, a validated task has a schedule
  const tag = schedule?._tag
  rows.t.setAnchor(
    i,
    tag === "At" || tag === "Cron" || tag === "Custom" ? WALL_TASK | WALL_SLOT : 0,
  )
  rows.push(i, first)
  rows.bump(SCHEDULED, 1)
  rows.accepted++
  const taskId = (id ?? formatId(i, rows.t.gen(i))) as TaskId
  if (breaker !== undefined) breakers.join(i, extra as Extras, breaker, taskId, now)
  return taskId
}

/**
 * @internal The row a caller's `id` may reuse (SPEC §9): its final task's, -1 when the id is
 * free or absent, or `DuplicateTaskId` while the task that has it is live.
 */
export const reusableRow = <J>(rows: Rows<J>, id: string | undefined): number | DuplicateTaskId => {
  const existing = id === undefined ? undefined : rows.ids.get(id)
  if (existing === undefined) return -1
  const s = rows.t.state(existing)
  if (s >= Lifecycle.DONE) return existing
  return new DuplicateTaskId({
    field: "id",
    value: id,
    message: `id ${show(id)} belongs to a task that is still ${Lifecycle.states[s]}`,
  })
}
