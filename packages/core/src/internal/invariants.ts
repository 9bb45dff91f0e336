/**
 * @internal
 * {@link checkInvariants}: SPEC §14's structural invariants over the kernel's rows and breakers.
 */
import { InvariantViolation } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import type { Breakers } from "./breakers.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED, RUNNING, PAUSED, DONE } = Lifecycle
const STATE_COUNT = Lifecycle.states.length

/**
 * @internal Checks heap order, accounting, one live heap entry per scheduled task at its slot,
 * the dead-entry count, ids, free rows and breakers; throws {@link InvariantViolation} on the
 * first break. O(n); for tests.
 */
export const checkInvariants = <J>(rows: Rows<J>, breakers: Breakers<J>): void => {
  const fail = (message: string): never => {
    throw new InvariantViolation({ message })
  }
  rows.heap.verify()
  const counted = new Float64Array(STATE_COUNT)
  for (let i = 0; i < rows.top; i++) {
    const s = rows.t.state(i)
    if (rows.present(i)) counted[s] = (counted[s] as number) + 1
    if (s === PAUSED && rows.present(i)) {
      const extra = rows.t.extra(i)
      if (extra?.pausedReason === undefined) fail(`paused task row ${i} has no reason`)
      if (rows.t.job(i) === undefined) fail(`paused task row ${i} lost its job`)
    }
    if (s !== RUNNING && rows.t.extra(i)?.pauseRequest !== undefined)
      fail(`task row ${i} is ${Lifecycle.states[s]} with a pause request`)
  }
  for (let s = 0; s < STATE_COUNT; s++) {
    if (counted[s] !== rows.counts[s]) {
      fail(`count of ${Lifecycle.states[s]} is ${rows.counts[s]}, table has ${counted[s]}`)
    }
  }
  const total = rows.counts.reduce((a, b) => a + b, 0)
  if (total !== rows.accepted - rows.removed) {
    fail(`states sum to ${total}, accepted - removed = ${rows.accepted - rows.removed}`)
  }
  const liveEntries = new Map<number, number>()
  let dead = 0
  // A run waiting on a limit (SPEC §20) has its heap key in a waiting queue instead.
  const entry = (slot: number, order: number, i: number) => {
    if (rows.isLive(i, order)) {
      if (liveEntries.has(i)) fail(`task row ${i} has two live heap entries`)
      if (slot !== rows.t.slot(i))
        fail(`task row ${i} is due ${rows.t.slot(i)}, its entry says ${slot}`)
      liveEntries.set(i, slot)
    } else dead++
  }
  rows.heap.forEach(entry)
  rows.queues?.forEach(entry)
  if (liveEntries.size !== rows.counts[SCHEDULED]) {
    fail(`${liveEntries.size} live heap entries for ${rows.counts[SCHEDULED]} scheduled tasks`)
  }
  if (dead !== rows.dead) fail(`${dead} dead heap entries, counter says ${rows.dead}`)
  if (rows.inFlight < (rows.counts[RUNNING] as number)) {
    fail(`${rows.inFlight} runs in flight for ${rows.counts[RUNNING]} running tasks`)
  }
  for (const [id, i] of rows.ids) {
    if (!rows.present(i) || rows.t.extra(i)?.id !== id)
      fail(`id ${id} maps to row ${i} of another task`)
  }
  rows.ring.forEachFree((i) => {
    if (rows.present(i)) fail(`row ${i} is free for reuse but holds a task`)
  })
  let breakerAt = Number.POSITIVE_INFINITY
  for (const cell of breakers.cells) {
    const state = cell.status.state
    if (state === "open" && cell.halfOpenAt < breakerAt) breakerAt = cell.halfOpenAt
    if (state !== "open" && cell.halfOpenAt !== Number.POSITIVE_INFINITY)
      fail(`breaker ${cell.name} is ${state} with a half-open time`)
    for (const i of cell.members) {
      const s = rows.t.state(i)
      if (!rows.present(i) || s >= DONE || rows.t.extra(i)?.breaker !== cell)
        fail(`breaker ${cell.name} lists row ${i}, which is not its live task`)
      const probe = cell.probe === i && cell.probeGen === rows.t.gen(i)
      const reason = rows.t.extra(i)?.pausedReason
      if (state === "open" && s === PAUSED && reason === undefined)
        fail(`breaker ${cell.name} is open and its task row ${i} is paused for no reason`)
      if (state !== "closed" && s === PAUSED && reason === "breaker" && probe)
        fail(`breaker ${cell.name}'s probe row ${i} is still held`)
    }
    if (cell.probe >= 0 && state !== "half-open")
      fail(`breaker ${cell.name} has a probe while ${state}`)
  }
  if (breakerAt !== breakers.at)
    fail(`breaker timer says ${breakers.at}, open breakers say ${breakerAt}`)
}
