/**
 * SPEC §14 Invariants, property-tested over random command sequences.
 *
 * A command list (schedule, cancel, pause, resume, update, pauseAll / resumeAll / cancelAll by
 * tag, clock moves with runDue / runUntil / tick) is interpreted
 * against a driver while a model tracks, independently of the kernel, every task's state, its
 * pending slot and its SPEC §4 ordering key (slot, priority rank, push sequence: a retry or a
 * recurring re-push gets a new sequence number when it is pushed). Jobs fail on a per-run
 * pattern, move the clock, and schedule, cancel, pause and query from inside. Some tasks share a
 * circuit breaker, which the model follows too (open, held tasks, half-open probe, close). After
 * every command the driver's own `checkInvariants()` runs, and the model is compared with what
 * the driver reports.
 *
 * 1. No run starts before its slot; runs start in §4 order.
 * 2. Accounting: per-state counts match the model and sum to accepted - removed.
 * 3. A cancelled task never starts a run after the cancel returned.
 * 4. A recurring task never has two runs at once; fixed-rate slots are multiples of the period
 *    from the first slot.
 * 5. The heap's live entries are the scheduled tasks (nextSlot is the model's earliest slot);
 *    dead entries run nothing.
 * 6. The same commands and seed give the same trace.
 * And for the controls (SPEC §15, §7): a paused task starts no run; a held one-shot or retry is
 *    never lost (it runs once released); resumed tasks continue at the slot SPEC §15 gives.
 */
import { Cron, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  Clock,
  Driver,
  Kernel,
  MissedRun,
  Random,
  Schedule,
  type Task,
  Time,
} from "../../src/index.ts"

const RUNS = Number(process.env.FC_RUNS ?? 1000)
/** Generous: a run takes ~1.5 ms here; a loaded machine or a large FC_RUNS needs room. */
const TIMEOUT = 60_000 + RUNS * 30

// ------------------------------------------------------------------ commands

type Priority = Task.Priority
type Policy = MissedRun.MissedRunPolicy

type ScheduleSpec =
  | { readonly kind: "once"; readonly delay: number }
  | { readonly kind: "at"; readonly offset: number }
  | { readonly kind: "fixedRate"; readonly period: number; readonly delay: number }
  | { readonly kind: "fixedDelay"; readonly period: number; readonly delay: number }
  | { readonly kind: "cron"; readonly expression: string }
  | { readonly kind: "custom"; readonly step: number; readonly stopAt: number }

interface RetrySpec {
  readonly maxRetries: number
  readonly base: number
  readonly factor: number
  readonly maxDelay: number | undefined
  readonly jitter: "none" | "full" | "equal"
}

type Target =
  | { readonly kind: "caller"; readonly id: string }
  | { readonly kind: "generated"; readonly index: number }
  | { readonly kind: "unknown" }

type Action =
  | { readonly kind: "schedule"; readonly spec: TaskSpec }
  | { readonly kind: "cancelSelf" }
  | { readonly kind: "cancel"; readonly target: Target }
  | { readonly kind: "query"; readonly target: Target }
  | { readonly kind: "pauseSelf" }

interface Behaviour {
  /** Bit k set: the run with runNumber ≡ k+1 (mod 4) fails. */
  readonly failMask: number
  readonly failMode: "throw" | "throwValue" | "promise"
  /** ms the job moves the clock forward (a run that takes time), in the task's first 3 runs. */
  readonly advance: number
  /** Done by the task's first two runs. */
  readonly actions: ReadonlyArray<Action>
}

interface TaskSpec {
  readonly id: string | undefined
  readonly schedule: ScheduleSpec
  readonly priority: Priority | undefined
  readonly retry: RetrySpec | undefined
  readonly missedRuns: Policy | undefined
  readonly pause: number
  readonly behaviour: Behaviour
  /** Whether it uses the shared breaker `b`. */
  readonly breaker: boolean
  readonly tags: ReadonlyArray<string>
}

interface UpdateSpec {
  readonly priority: Priority | undefined
  readonly schedule: ScheduleSpec | undefined
  readonly breaker: boolean | undefined
  readonly tags: ReadonlyArray<string> | undefined
}

type Command =
  | { readonly kind: "schedule"; readonly spec: TaskSpec }
  | { readonly kind: "cancel"; readonly target: Target }
  | { readonly kind: "pause"; readonly target: Target }
  | { readonly kind: "resume"; readonly target: Target }
  | { readonly kind: "update"; readonly target: Target; readonly changes: UpdateSpec }
  | { readonly kind: "pauseAll" | "resumeAll" | "cancelAll"; readonly tag: string }
  | { readonly kind: "runDue" }
  | { readonly kind: "set"; readonly by: number }
  | { readonly kind: "runUntil"; readonly by: number }
  | { readonly kind: "tick"; readonly by: number }

const CALLER_IDS = ["a", "b", "c", "#h"] as const
const TAGS = ["x", "y"] as const
/** The shared breaker some tasks use. */
const BREAKER = { failures: 2, coolDown: 30, factor: 2, maxCoolDown: 100 } as const
const CRONS = ["* * * * * *", "*/2 * * * * *", "*/5 * * * * *", "0,30 * * * * *", "* * * * *"]

const opt = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined, freq: 2 })

const scheduleArb: fc.Arbitrary<ScheduleSpec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("once" as const),
      delay: fc.integer({ min: 0, max: 60 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("at" as const),
      offset: fc.integer({ min: -30, max: 60 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("fixedRate" as const),
      period: fc.integer({ min: 3, max: 40 }),
      delay: fc.integer({ min: 0, max: 30 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("fixedDelay" as const),
      period: fc.integer({ min: 1, max: 40 }),
      delay: fc.integer({ min: 0, max: 30 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("cron" as const),
      expression: fc.constantFrom(...CRONS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("custom" as const),
      step: fc.integer({ min: 1, max: 40 }),
      stopAt: fc.integer({ min: 0, max: 3000 }),
    }),
  },
)

const retryArb: fc.Arbitrary<RetrySpec | undefined> = opt(
  fc.record({
    maxRetries: fc.integer({ min: 0, max: 2 }),
    base: fc.integer({ min: 0, max: 30 }),
    factor: fc.constantFrom(1, 1.5, 2, 3),
    maxDelay: opt(fc.integer({ min: 0, max: 50 })),
    jitter: fc.constantFrom("none" as const, "full" as const, "equal" as const),
  }),
)

const targetArb: fc.Arbitrary<Target> = fc.oneof(
  fc.record({ kind: fc.constant("caller" as const), id: fc.constantFrom(...CALLER_IDS) }),
  fc.record({ kind: fc.constant("generated" as const), index: fc.nat(12) }),
  fc.constant({ kind: "unknown" as const }),
)

const behaviourArb = (actions: fc.Arbitrary<ReadonlyArray<Action>>): fc.Arbitrary<Behaviour> =>
  fc.record({
    failMask: fc.oneof(
      { weight: 2, arbitrary: fc.constant(0) },
      { weight: 2, arbitrary: fc.nat(15) },
    ),
    failMode: fc.constantFrom("throw" as const, "throwValue" as const, "promise" as const),
    advance: fc.oneof(
      { weight: 5, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 25 }) },
    ),
    actions,
  })

const taskSpecArb = (actions: fc.Arbitrary<ReadonlyArray<Action>>): fc.Arbitrary<TaskSpec> =>
  fc.record({
    id: opt(fc.constantFrom(...CALLER_IDS)),
    schedule: scheduleArb,
    priority: opt(fc.constantFrom<Priority>("high", "normal", "low")),
    retry: retryArb,
    missedRuns: opt(fc.constantFrom(...MissedRun.policies)),
    pause: fc.oneof(
      { weight: 3, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
    ),
    behaviour: behaviourArb(actions),
    breaker: fc.oneof(
      { weight: 2, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
    tags: fc.subarray([...TAGS]),
  })

/** Tasks scheduled by jobs do not schedule further tasks themselves (bounded nesting). */
const nestedSpecArb = taskSpecArb(
  fc.array(
    fc.oneof(
      fc.constant({ kind: "cancelSelf" as const }),
      fc.record({ kind: fc.constant("query" as const), target: targetArb }),
      fc.constant({ kind: "pauseSelf" as const }),
    ),
    { maxLength: 1 },
  ),
)

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant("schedule" as const), spec: nestedSpecArb }),
  fc.constant({ kind: "cancelSelf" as const }),
  fc.record({ kind: fc.constant("cancel" as const), target: targetArb }),
  fc.record({ kind: fc.constant("query" as const), target: targetArb }),
  fc.constant({ kind: "pauseSelf" as const }),
)

const topSpecArb = taskSpecArb(
  fc.oneof(
    { weight: 3, arbitrary: fc.constant([]) },
    { weight: 2, arbitrary: fc.array(actionArb, { maxLength: 2 }) },
  ),
)

const byArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 400 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 3000 }) },
)

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("schedule" as const), spec: topSpecArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), target: targetArb }) },
  { weight: 1, arbitrary: fc.constant({ kind: "runDue" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("set" as const), by: byArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("runUntil" as const), by: byArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const), by: byArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("pause" as const), target: targetArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resume" as const), target: targetArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      target: targetArb,
      changes: fc.record({
        priority: opt(fc.constantFrom<Priority>("high", "normal", "low")),
        schedule: opt(scheduleArb),
        breaker: opt(fc.boolean()),
        tags: opt(fc.subarray([...TAGS])),
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom("pauseAll" as const, "resumeAll" as const, "cancelAll" as const),
      tag: fc.constantFrom(...TAGS),
    }),
  },
)

// ------------------------------------------------------------------ the model

type State = Task.TaskState

interface ModelTask {
  readonly uid: number
  readonly id: string
  readonly generation: number
  /** The kernel's table row (for the table order of bulk controls). */
  readonly row: number
  spec: TaskSpec
  rank: number
  firstSlot: number
  cron: Cron.Cron | undefined
  custom: Schedule.NextSlot | undefined
  state: State
  attempt: number
  runs: number
  gridSlot: number
  consecutiveFailures: number
  /** The pending slot (or retry due time) while paused. */
  held: number
  pausedReason: Task.PauseReason | undefined
  /** A pause asked for while running. */
  request: Task.PauseReason | undefined
  /** A schedule change waiting for the slot in progress, and when it was made. */
  restart: { readonly spec: ScheduleSpec; readonly at: number } | undefined
  resumeFrom: number
  notBefore: number
  member: boolean
  tags: ReadonlyArray<string>
}

interface ModelBreaker {
  state: Task.BreakerState
  failures: number
  opens: number
  halfOpenAt: number
  probe: number
  /** uids, in the order they joined. */
  members: Array<number>
}

interface Pending {
  slot: number
  readonly rank: number
  seq: number
}

const RANK: Record<Priority, number> = { high: 0, normal: 1, low: 2 }

const customNext =
  (step: number, stopAt: number): Schedule.NextSlot =>
  (slot, finishedAt) =>
    slot === undefined
      ? finishedAt + step
      : slot + step > stopAt
        ? undefined
        : Math.max(slot + step, finishedAt)

const toSchedule = (s: ScheduleSpec, now: number): Schedule.Schedule => {
  switch (s.kind) {
    case "once":
      return Schedule.once(s.delay)
    case "at":
      return Schedule.at(now + s.offset)
    case "fixedRate":
      return Schedule.fixedRate(s.period, { delay: s.delay })
    case "fixedDelay":
      return Schedule.fixedDelay(s.period, { delay: s.delay })
    case "cron":
      return Schedule.cron(s.expression)
    case "custom":
      return Schedule.custom(customNext(s.step, s.stopAt))
  }
}

const isGrid = (m: ModelTask) =>
  m.spec.schedule.kind === "fixedRate" || m.spec.schedule.kind === "cron"
const policyOf = (m: ModelTask): Policy => m.spec.missedRuns ?? "catch-up"

/** The latest grid slot <= t (t >= the first slot). */
const gridAtOrBefore = (m: ModelTask, t: number): number => {
  const s = m.spec.schedule
  if (s.kind === "fixedRate")
    return m.firstSlot + Math.floor((t - m.firstSlot) / s.period) * s.period
  return Cron.prev(m.cron as Cron.Cron, new Date(t + 1)).getTime()
}

/** The first grid slot strictly after t. */
const gridAfter = (m: ModelTask, t: number): number => {
  const s = m.spec.schedule
  if (s.kind === "fixedRate") {
    return t < m.firstSlot ? m.firstSlot : gridAtOrBefore(m, t) + s.period
  }
  return Cron.next(m.cron as Cron.Cron, new Date(t)).getTime()
}

/** The first slot of schedule `s` scheduled at `now` (`at` was made at `madeAt`). */
const firstOf = (
  s: ScheduleSpec,
  now: number,
  madeAt: number,
): { first: number; cron: Cron.Cron | undefined; custom: Schedule.NextSlot | undefined } => {
  const cron = s.kind === "cron" ? Cron.parseUnsafe(s.expression, "UTC") : undefined
  const first =
    s.kind === "once"
      ? now + s.delay
      : s.kind === "at"
        ? madeAt + s.offset
        : s.kind === "fixedRate" || s.kind === "fixedDelay"
          ? now + s.delay
          : s.kind === "cron"
            ? Cron.next(cron as Cron.Cron, new Date(now)).getTime()
            : now + s.step
  return { first, cron, custom: s.kind === "custom" ? customNext(s.step, s.stopAt) : undefined }
}

const applySchedule = (m: ModelTask, s: ScheduleSpec, now: number, madeAt: number): number => {
  const f = firstOf(s, now, madeAt)
  m.spec = { ...m.spec, schedule: s }
  m.firstSlot = f.first
  m.cron = f.cron
  m.custom = f.custom
  m.gridSlot = f.first
  return f.first
}

/** SPEC §3: the next slot after a run of grid slot `gridSlot` that ended at `f`. */
const expectedNext = (m: ModelTask, f: number): number | undefined => {
  if (m.restart !== undefined) {
    // A schedule change waited for this slot to end: it starts now, as if scheduled at `f`.
    const r = m.restart
    m.restart = undefined
    m.resumeFrom = -1
    return applySchedule(m, r.spec, f, r.at)
  }
  const s = m.spec.schedule
  let from = m.gridSlot
  if (m.resumeFrom >= 0) {
    // A held retry ran after a resume: the grid goes on from the first slot at or after it.
    if (isGrid(m) && m.resumeFrom - 1 >= m.firstSlot) {
      const skippedTo = gridAtOrBefore(m, m.resumeFrom - 1)
      if (skippedTo > from) from = skippedTo
    }
    m.resumeFrom = -1
  }
  switch (s.kind) {
    case "once":
    case "at":
      return undefined
    case "fixedDelay":
      return f + s.period
    case "custom":
      return (m.custom as Schedule.NextSlot)(m.gridSlot, f)
    case "fixedRate":
    case "cron": {
      const nominal = gridAfter(m, from)
      const policy = policyOf(m)
      if (policy === "catch-up" || nominal > f) return nominal
      return policy === "coalesce" ? gridAtOrBefore(m, f) : gridAfter(m, f)
    }
  }
}

/** Bounds of the retry delay for retry r (SPEC §7). */
const backoffBounds = (r: RetrySpec, retry: number): [number, number] => {
  const b = Math.floor(Math.min(r.maxDelay ?? Time.MAX_MS, r.base * r.factor ** (retry - 1)))
  switch (r.jitter) {
    case "none":
      return [b, b]
    case "full":
      return [0, b]
    case "equal":
      return [b - Math.floor(b / 2), b]
  }
}

interface Options {
  readonly seed: number
  readonly retention?: { readonly maxFinished: number; readonly maxAgeMs?: number }
}

/**
 * Runs `commands` on a fresh driver with the model alongside. Returns the trace; throws with
 * every violation found at the first command that broke something.
 */
const interpret = (commands: ReadonlyArray<Command>, options: Options): Array<string> => {
  const clock = new Clock.ManualClock(0)
  const trace: Array<string> = []
  const violations: Array<string> = []
  const fail = (message: string) => {
    violations.push(message)
  }
  const retention = options.retention
  const retaining = retention === undefined

  const tasks = new Map<number, ModelTask>()
  const byId = new Map<string, ModelTask>()
  const pending = new Map<number, Pending>()
  const generated: Array<string> = []
  let seq = 0
  let uids = 0
  let accepted = 0
  let replaced = 0
  /** The task whose job runs now, and the `now` the kernel used to take it. */
  let current: ModelTask | undefined
  let takeNow = 0
  /** The latest slot the running command takes (runDue: its call time; runUntil: its end). */
  let takeLimit = 0
  let starts = 0
  let records: Array<Task.RunRecord> = []
  let rows = 0
  const breaker: ModelBreaker = {
    state: "closed",
    failures: 0,
    opens: 0,
    halfOpenAt: Number.POSITIVE_INFINITY,
    probe: -1,
    members: [],
  }

  const driver = Driver.make({
    clock,
    random: Random.seeded(options.seed),
    ...(retention === undefined ? {} : { retention }),
    breakers: { b: BREAKER },
    onRun: (record) => onRun(record),
  })

  // ---- the controls, modelled (SPEC §15, §7) ----

  const breakerAt = () => (breaker.state === "open" ? breaker.halfOpenAt : Number.POSITIVE_INFINITY)

  /** Where a paused task continues if resumed at `at` (SPEC §15). */
  const resumeSlot = (m: ModelTask, at: number): { slot: number; skips: boolean } => {
    const grid = isGrid(m)
    if (m.attempt > 1) {
      const skips = grid && at - 1 >= m.firstSlot && gridAfter(m, m.gridSlot) <= at - 1
      return { slot: m.held, skips }
    }
    const k = m.spec.schedule.kind
    if (k === "once" || k === "at") return { slot: m.held, skips: false }
    if (grid) return { slot: m.held >= at ? m.held : gridAfter(m, at - 1), skips: false }
    return { slot: Math.max(m.held, at), skips: false }
  }

  const release = (m: ModelTask, at: number) => {
    const r = resumeSlot(m, at)
    m.state = "scheduled"
    m.consecutiveFailures = 0
    m.pausedReason = undefined
    if (m.attempt > 1) {
      if (r.skips) m.resumeFrom = at
    } else m.gridSlot = r.slot
    pending.set(m.uid, { slot: r.slot, rank: m.rank, seq: seq++ })
    trace.push(`release ${m.id} at=${at} slot=${r.slot}`)
  }

  const pickProbe = (at: number): ModelTask | undefined => {
    let best: ModelTask | undefined
    let bestSlot = 0
    for (const uid of breaker.members) {
      const m = tasks.get(uid) as ModelTask
      if (m.state !== "paused" || m.pausedReason !== "breaker") continue
      const slot = resumeSlot(m, at).slot
      // The one total order both stores use (Breaker.probeBefore): due slot, rank, id.
      if (
        best === undefined ||
        slot < bestSlot ||
        (slot === bestSlot && (m.rank < best.rank || (m.rank === best.rank && m.id < best.id)))
      ) {
        best = m
        bestSlot = slot
      }
    }
    if (best !== undefined) {
      breaker.probe = best.uid
      release(best, at)
    }
    return best
  }

  const halfOpen = (at: number) => {
    breaker.state = "half-open"
    breaker.halfOpenAt = Number.POSITIVE_INFINITY
    const probe = pickProbe(at)
    if (probe !== undefined) probe.notBefore = at
    trace.push(`half-open at=${at} probe=${probe?.id}`)
  }

  /** PAUSE (SPEC §5): the kernel's answer for `pause`, applied to the model. */
  const pauseModel = (m: ModelTask, reason: Task.PauseReason, now: number): boolean => {
    if (m.state === "paused") {
      if (reason === "manual") m.pausedReason = "manual"
      return false
    }
    if (m.state === "running") {
      if (m.request === undefined) {
        m.request = reason
        return true
      }
      if (reason === "manual") m.request = "manual"
      return false
    }
    if (m.state !== "scheduled") return false
    m.held = (pending.get(m.uid) as Pending).slot
    pending.delete(m.uid)
    m.state = "paused"
    m.pausedReason = reason
    if (breaker.probe === m.uid) {
      breaker.probe = -1
      pickProbe(now)
    }
    return true
  }

  const resumeModel = (m: ModelTask, now: number): boolean => {
    if (m.state === "running") {
      if (m.request === undefined) return false
      m.request = undefined
      return true
    }
    if (m.state !== "paused") return false
    release(m, now)
    return true
  }

  const join = (m: ModelTask, now: number) => {
    breaker.members.push(m.uid)
    m.member = true
    if (breaker.state === "closed") return
    if (breaker.state === "half-open" && breaker.probe < 0 && m.state === "scheduled") {
      breaker.probe = m.uid
      return
    }
    pauseModel(m, "breaker", now)
  }

  const leave = (m: ModelTask, now: number) => {
    breaker.members = breaker.members.filter((u) => u !== m.uid)
    m.member = false
    const probe = breaker.probe === m.uid
    if (probe) breaker.probe = -1
    if (probe && breaker.state === "half-open") pickProbe(now)
  }

  /** The breaker after a slot of member `m` ended (SPEC §7; Breaker.afterSlot). */
  const breakerAfterSlot = (m: ModelTask, failed: boolean, at: number) => {
    const probe = breaker.probe === m.uid
    if (breaker.state === "closed") {
      if (!failed) {
        breaker.failures = 0
        return
      }
      breaker.failures++
      if (breaker.failures < BREAKER.failures) return
      breaker.opens = 1
    } else if (breaker.state === "open" || !probe) return
    else if (failed) breaker.opens++
    else {
      breaker.state = "closed"
      breaker.failures = 0
      breaker.opens = 0
      breaker.probe = -1
      trace.push(`close at=${at}`)
      for (const uid of [...breaker.members]) {
        if (uid === m.uid) continue
        const o = tasks.get(uid) as ModelTask
        if (o.state === "paused" && o.pausedReason === "breaker") release(o, at)
        else if (o.state === "running" && o.request === "breaker") o.request = undefined
      }
      return
    }
    breaker.state = "open"
    breaker.probe = -1
    const coolDown = Math.floor(
      Math.min(BREAKER.maxCoolDown, BREAKER.coolDown * BREAKER.factor ** (breaker.opens - 1)),
    )
    breaker.halfOpenAt = at + coolDown
    trace.push(`open at=${at} until=${breaker.halfOpenAt}`)
    for (const uid of [...breaker.members])
      if (uid !== m.uid) pauseModel(tasks.get(uid) as ModelTask, "breaker", at)
  }

  /** Half-open times the kernel reached while taking runs up to `takeLimit`. */
  const dueBreaker = (): boolean => {
    const at = breakerAt()
    const top = minPending()
    if (at > takeLimit || (top !== undefined && at > top[1].slot)) return false
    halfOpen(Math.max(at, takeNow))
    return true
  }

  const resolveTarget = (t: Target): string =>
    t.kind === "caller"
      ? t.id
      : t.kind === "generated"
        ? (generated[t.index % Math.max(1, generated.length)] ?? "#0.1")
        : "never-scheduled"

  const modelStatus = (id: string): State | "unknown" => byId.get(id)?.state ?? "unknown"

  const checkStatus = (id: string, where: string) => {
    const expected = modelStatus(id)
    const actual = driver.status(id)
    const final = expected === "done" || expected === "failed" || expected === "cancelled"
    if (actual !== expected && !(final && !retaining && actual === "unknown")) {
      fail(`${where}: status(${id}) is ${actual}, model says ${expected}`)
    }
  }

  const minPending = (): [number, Pending] | undefined => {
    let best: [number, Pending] | undefined
    for (const entry of pending) {
      const [, p] = entry
      const b = best?.[1]
      if (
        b === undefined ||
        p.slot < b.slot ||
        (p.slot === b.slot && (p.rank < b.rank || (p.rank === b.rank && p.seq < b.seq)))
      ) {
        best = entry
      }
    }
    return best
  }

  const schedule = (spec: TaskSpec, where: string) => {
    const now = clock.now()
    const live = spec.id === undefined ? undefined : byId.get(spec.id)
    const duplicate =
      live !== undefined &&
      (live.state === "scheduled" || live.state === "running" || live.state === "paused")
    const r = driver.schedule({
      job: (run) => job(uid, run),
      schedule: toSchedule(spec.schedule, now),
      ...(spec.id === undefined ? {} : { id: spec.id }),
      ...(spec.priority === undefined ? {} : { priority: spec.priority }),
      ...(spec.retry === undefined
        ? {}
        : {
            retry: {
              maxRetries: spec.retry.maxRetries,
              base: spec.retry.base,
              factor: spec.retry.factor,
              jitter: spec.retry.jitter,
              ...(spec.retry.maxDelay === undefined ? {} : { maxDelay: spec.retry.maxDelay }),
            },
          }),
      ...(spec.missedRuns === undefined ? {} : { missedRuns: spec.missedRuns }),
      ...(spec.pause === 0 ? {} : { pauseAfterConsecutiveFailures: spec.pause }),
      ...(spec.breaker ? { breaker: "b" } : {}),
      ...(spec.tags.length === 0 ? {} : { tags: spec.tags }),
    })
    const uid = uids++
    if (Result.isFailure(r)) {
      trace.push(`${where} schedule → ${r.failure._tag}`)
      if (!(duplicate && r.failure._tag === "DuplicateTaskId")) {
        fail(
          `${where}: schedule failed with ${r.failure.message} (duplicate expected: ${duplicate})`,
        )
      }
      return
    }
    const id = r.success
    if (duplicate) fail(`${where}: live id ${spec.id} was accepted again`)
    if (spec.id === undefined) {
      if (!/^#\d+\.\d+$/.test(id) || generated.includes(id))
        fail(`${where}: bad generated id ${id}`)
      generated.push(id)
    } else if (id !== spec.id) fail(`${where}: caller id ${spec.id} came back as ${id}`)
    const info = driver.info(id)
    if (info === undefined) {
      fail(`${where}: no info for the new task ${id}`)
      return
    }
    if (live !== undefined && retaining) {
      if (info.generation <= live.generation)
        fail(`${where}: reused id ${id} kept generation ${info.generation}`)
      replaced++
    }
    const s = spec.schedule
    const cron = s.kind === "cron" ? Cron.parseUnsafe(s.expression, "UTC") : undefined
    const first =
      s.kind === "once"
        ? now + s.delay
        : s.kind === "at"
          ? now + s.offset
          : s.kind === "fixedRate" || s.kind === "fixedDelay"
            ? now + s.delay
            : s.kind === "cron"
              ? Cron.next(cron as Cron.Cron, new Date(now)).getTime()
              : now + s.step
    if (info.scheduledFor !== first)
      fail(`${where}: ${id} first slot ${info.scheduledFor}, expected ${first}`)
    const m: ModelTask = {
      uid,
      id,
      generation: info.generation,
      row: live !== undefined && retaining ? live.row : rows++,
      spec,
      rank: RANK[spec.priority ?? "normal"],
      firstSlot: first,
      cron,
      custom: s.kind === "custom" ? customNext(s.step, s.stopAt) : undefined,
      state: "scheduled",
      attempt: 1,
      runs: 0,
      gridSlot: first,
      consecutiveFailures: 0,
      held: 0,
      pausedReason: undefined,
      request: undefined,
      restart: undefined,
      resumeFrom: -1,
      notBefore: -1,
      member: false,
      tags: spec.tags,
    }
    tasks.set(uid, m)
    byId.set(id, m)
    pending.set(uid, { slot: first, rank: m.rank, seq: seq++ })
    accepted++
    trace.push(`${where} schedule ${id} uid=${uid} first=${first}`)
    if (spec.breaker) join(m, now)
  }

  const cancelModel = (m: ModelTask | undefined, now: number): boolean => {
    if (
      m === undefined ||
      !(m.state === "scheduled" || m.state === "running" || m.state === "paused")
    )
      return false
    m.state = "cancelled"
    m.request = undefined
    m.pausedReason = undefined
    pending.delete(m.uid)
    if (m.member) leave(m, now)
    return true
  }

  const cancel = (id: string, where: string) => {
    const actual = driver.cancel(id)
    const expected = cancelModel(byId.get(id), clock.now())
    trace.push(`${where} cancel ${id} → ${actual}`)
    if (actual !== expected)
      fail(`${where}: cancel(${id}) returned ${actual}, model says ${expected}`)
  }

  const pause = (id: string, where: string) => {
    const actual = driver.pause(id)
    const m = byId.get(id)
    const expected = m !== undefined && pauseModel(m, "manual", clock.now())
    trace.push(`${where} pause ${id} → ${actual}`)
    if (actual !== expected)
      fail(`${where}: pause(${id}) returned ${actual}, model says ${expected}`)
  }

  const resume = (id: string, where: string) => {
    const actual = driver.resume(id)
    const m = byId.get(id)
    const expected = m !== undefined && resumeModel(m, clock.now())
    trace.push(`${where} resume ${id} → ${actual}`)
    if (actual !== expected)
      fail(`${where}: resume(${id}) returned ${actual}, model says ${expected}`)
  }

  const update = (id: string, changes: UpdateSpec, where: string) => {
    const now = clock.now()
    const r = driver.update(id, {
      ...(changes.priority === undefined ? {} : { priority: changes.priority }),
      ...(changes.schedule === undefined ? {} : { schedule: toSchedule(changes.schedule, now) }),
      ...(changes.breaker === undefined ? {} : { breaker: changes.breaker ? "b" : null }),
      ...(changes.tags === undefined ? {} : { tags: changes.tags }),
    })
    if (Result.isFailure(r)) {
      fail(`${where}: update(${id}) failed with ${r.failure.message}`)
      return
    }
    const m = byId.get(id)
    const live =
      m !== undefined && (m.state === "scheduled" || m.state === "running" || m.state === "paused")
    trace.push(`${where} update ${id} → ${r.success}`)
    if (r.success !== live) fail(`${where}: update(${id}) returned ${r.success}, model ${live}`)
    if (!live || m === undefined) return
    if (changes.tags !== undefined) m.tags = changes.tags
    let repush = false
    if (changes.priority !== undefined && RANK[changes.priority] !== m.rank) {
      m.rank = RANK[changes.priority]
      repush = true
    }
    if (changes.schedule !== undefined) {
      if (m.state === "running" || m.attempt > 1) m.restart = { spec: changes.schedule, at: now }
      else {
        m.restart = undefined
        m.resumeFrom = -1
        const first = applySchedule(m, changes.schedule, now, now)
        if (m.state === "paused") m.held = first
        else (pending.get(m.uid) as Pending).slot = first
        repush = true
      }
    }
    if (repush && m.state === "scheduled") {
      const p = pending.get(m.uid) as Pending
      pending.set(m.uid, { slot: p.slot, rank: m.rank, seq: seq++ })
    }
    if (changes.breaker !== undefined && changes.breaker !== m.member) {
      if (m.member) leave(m, now)
      if (changes.breaker) join(m, now)
      if (!m.member || breaker.state === "closed") {
        if (m.state === "paused" && m.pausedReason === "breaker") release(m, now)
        else if (m.state === "running" && m.request === "breaker") m.request = undefined
      }
    }
  }

  const bulk = (kind: "pauseAll" | "resumeAll" | "cancelAll", tag: string, where: string) => {
    const actual =
      kind === "pauseAll"
        ? driver.pauseAll({ tag })
        : kind === "resumeAll"
          ? driver.resumeAll({ tag })
          : driver.cancelAll({ tag })
    const now = clock.now()
    const matching = [...byId.values()]
      .filter((m) => m.tags.includes(tag))
      .sort((a, b) => a.row - b.row)
    const expected: Array<string> = []
    for (const m of matching) {
      const changed =
        kind === "pauseAll"
          ? pauseModel(m, "manual", now)
          : kind === "resumeAll"
            ? resumeModel(m, now)
            : cancelModel(m, now)
      if (changed) expected.push(m.id)
    }
    trace.push(`${where} ${kind} ${tag} → ${actual.join(",")}`)
    if (actual.join(",") !== expected.join(","))
      fail(`${where}: ${kind}(${tag}) changed [${actual}], model [${expected}]`)
  }

  const coalescible = (m: ModelTask, p: Pending, now: number): number | undefined => {
    if (!isGrid(m) || policyOf(m) !== "coalesce" || m.attempt !== 1 || p.slot >= now)
      return undefined
    const latest = gridAtOrBefore(m, Math.min(now, takeLimit))
    return latest > p.slot ? latest : undefined
  }

  function job(uid: number, run: Task.RunInfo): unknown {
    const m = tasks.get(uid) as ModelTask
    const where = `run ${m.id}(uid ${uid})`
    starts++
    if (current !== undefined) fail(`${where}: started while ${current.id} is running`)
    if (run.generation !== m.generation || run.id !== m.id) {
      fail(
        `${where}: run of ${run.id}#${run.generation}, model task is ${m.id}#${m.generation} (dead entry ran: §14.5)`,
      )
    }
    // §4 order: replay the kernel's choice on the model's pending entries, with the coalescing
    // of late grid slots that the kernel does when such an entry surfaces.
    for (let guard = 0; ; guard++) {
      if (dueBreaker()) continue
      const top = minPending()
      if (top === undefined || guard > 1000) {
        fail(`${where}: no pending entry to start`)
        break
      }
      const [topUid, p] = top
      const moved = coalescible(tasks.get(topUid) as ModelTask, p, takeNow)
      if (moved !== undefined) {
        const t = tasks.get(topUid) as ModelTask
        p.slot = moved
        p.seq = seq++
        t.gridSlot = moved
        continue
      }
      if (topUid !== uid) {
        const other = tasks.get(topUid) as ModelTask
        fail(
          `${where}: started before ${other.id} (slot ${p.slot} rank ${p.rank} seq ${p.seq}) (§4 order)`,
        )
      }
      break
    }
    // After the replay: a breaker may have gone half-open (letting its probe through) first.
    if (m.state !== "scheduled")
      fail(`${where}: started in state ${m.state} (paused, cancelled or final: §14.3, §15)`)
    const p = pending.get(uid)
    if (p !== undefined) {
      if (run.scheduledFor !== p.slot)
        fail(`${where}: slot ${run.scheduledFor}, model says ${p.slot}`)
      const start = Math.max(p.slot, takeNow, m.notBefore)
      if (run.startedAt !== start)
        fail(`${where}: started at ${run.startedAt}, expected ${start} (slot, now, half-open)`)
    }
    m.notBefore = -1
    if ((run.tags ?? []).join(",") !== m.tags.join(","))
      fail(`${where}: run tags [${run.tags}], model [${m.tags}]`)
    if (run.startedAt < run.scheduledFor) fail(`${where}: started before its slot (§14.1)`)
    if (run.startedAt !== clock.now())
      fail(`${where}: startedAt ${run.startedAt} but the clock says ${clock.now()}`)
    m.runs++
    if (run.runNumber !== m.runs || run.attempt !== m.attempt) {
      fail(`${where}: run ${run.runNumber} attempt ${run.attempt}, model ${m.runs}/${m.attempt}`)
    }
    const s = m.spec.schedule
    if (
      s.kind === "fixedRate" &&
      run.attempt === 1 &&
      (run.scheduledFor - m.firstSlot) % s.period !== 0
    ) {
      fail(
        `${where}: fixed-rate slot ${run.scheduledFor} is off the grid from ${m.firstSlot} by ${s.period} (§14.4)`,
      )
    }
    pending.delete(uid)
    m.state = "running"
    current = m
    trace.push(
      `start ${m.id} uid=${uid} slot=${run.scheduledFor} at=${run.startedAt} attempt=${run.attempt} run=${run.runNumber}`,
    )

    const b = m.spec.behaviour
    // Only early runs take time: a task whose every run outlasts its period builds a backlog
    // that grows without bound under catch-up (each command would run twice as many as before).
    if (b.advance > 0 && m.runs <= 3) clock.advance(b.advance)
    if (m.runs <= 2) {
      for (const action of b.actions) {
        switch (action.kind) {
          case "schedule":
            schedule(action.spec, `${where} job`)
            break
          case "cancelSelf":
            cancel(m.id, `${where} job`)
            break
          case "cancel":
            cancel(resolveTarget(action.target), `${where} job`)
            break
          case "query":
            checkStatus(resolveTarget(action.target), `${where} job`)
            checkStatus(m.id, `${where} job (self)`)
            break
          case "pauseSelf":
            pause(m.id, `${where} job`)
            break
        }
      }
    }
    if (((b.failMask >> ((m.runs - 1) % 4)) & 1) === 1) {
      if (b.failMode === "throw") throw new Error(`planned failure of ${m.id}`)
      if (b.failMode === "throwValue") throw `planned failure of ${m.id}`
      return Promise.resolve("a promise is a failure for the inline driver")
    }
    return undefined
  }

  function onRun(record: Task.RunRecord): void {
    // A runaway command (a run method that never returns) surfaces as a failure, not a hang.
    if (starts > 20_000) throw new Error(`runaway: more than 20,000 runs in one command`)
    const m = current
    current = undefined
    takeNow = record.finishedAt
    records.push(record)
    trace.push(
      `end ${record.id}#${record.generation} ${record.outcome.kind} → ${record.state}/${record.continuation} next=${record.nextSlot}`,
    )
    if (m === undefined) {
      fail(`record of ${record.id} without a run in progress`)
      return
    }
    const where = `record ${m.id}(uid ${m.uid})`
    if (record.id !== m.id || record.generation !== m.generation)
      fail(`${where}: record is for ${record.id}#${record.generation}`)
    if (record.finishedAt !== clock.now())
      fail(`${where}: finishedAt ${record.finishedAt} != clock ${clock.now()}`)
    const b = m.spec.behaviour
    const failed = ((b.failMask >> ((m.runs - 1) % 4)) & 1) === 1
    if ((record.outcome.kind !== "succeeded") !== failed)
      fail(`${where}: outcome ${record.outcome.kind}, planned failure: ${failed}`)
    if (m.state === "cancelled") {
      if (
        record.state !== "cancelled" ||
        record.continuation !== "final" ||
        record.nextSlot !== undefined
      ) {
        fail(
          `${where}: cancelled while running but the record says ${record.state}/${record.continuation}`,
        )
      }
      return
    }
    const f = record.finishedAt
    const retry = m.spec.retry
    const expect3 = (state: State, continuation: Task.Continuation) => {
      if (record.state !== state || record.continuation !== continuation) {
        fail(
          `${where}: ${record.state}/${record.continuation}, model expects ${state}/${continuation}`,
        )
      }
    }
    const requested = m.request
    m.request = undefined
    const hold = (reason: Task.PauseReason, slot: number) => {
      m.state = "paused"
      m.pausedReason = reason
      m.held = slot
      if (record.pausedReason !== reason)
        fail(`${where}: paused for ${record.pausedReason}, model says ${reason}`)
    }
    if (failed && retry !== undefined && m.attempt <= retry.maxRetries) {
      const [lo, hi] = backoffBounds(retry, m.attempt)
      const delay = (record.nextSlot ?? Number.NaN) - f
      if (!(delay >= lo && delay <= hi))
        fail(`${where}: retry delay ${delay} outside [${lo}, ${hi}]`)
      m.attempt++
      if (requested !== undefined) {
        // A pause was requested during the run: the retry is held, never dropped.
        expect3("paused", "retry")
        hold(requested, record.nextSlot as number)
        return
      }
      expect3("scheduled", "retry")
      m.state = "scheduled"
      pending.set(m.uid, { slot: record.nextSlot as number, rank: m.rank, seq: seq++ })
      return
    }
    m.attempt = 1
    const stops = failed && m.spec.pause > 0 && m.consecutiveFailures + 1 >= m.spec.pause
    const probe = breaker.probe === m.uid
    const opens =
      failed &&
      m.member &&
      (breaker.state === "closed"
        ? breaker.failures + 1 >= BREAKER.failures
        : breaker.state === "half-open" && probe)
    m.consecutiveFailures = failed ? m.consecutiveFailures + 1 : 0
    const next = expectedNext(m, f)
    if (next !== record.nextSlot)
      fail(`${where}: next slot ${record.nextSlot}, model says ${next} (§3)`)
    // The breaker moves first (it may hold or release the others), then this task goes on.
    if (m.member) breakerAfterSlot(m, failed, f)
    if (next === undefined) {
      m.state = failed ? "failed" : "done"
      expect3(m.state, "final")
      if (m.member) leave(m, f)
      return
    }
    if (!failed && requested !== undefined) {
      expect3("paused", "next")
      hold(requested, next)
      return
    }
    if (failed && (requested !== undefined || stops || opens)) {
      // A requested pause, the failure policy or the breaker stops a recurring task (§5, §7).
      expect3("paused", "next")
      hold(requested ?? (stops ? "failures" : "breaker"), next)
      return
    }
    expect3("scheduled", "next")
    m.state = "scheduled"
    m.gridSlot = record.nextSlot ?? next
    pending.set(m.uid, { slot: m.gridSlot, rank: m.rank, seq: seq++ })
  }

  const afterCommand = (where: string) => {
    try {
      driver.checkInvariants()
    } catch (error) {
      fail(`${where}: checkInvariants: ${String(error)}`)
    }
    const stats = driver.stats()
    const count = (state: State) => [...byId.values()].filter((m) => m.state === state).length
    if (stats.running !== 0 || stats.inFlight !== 0)
      fail(`${where}: runs in flight between commands`)
    if (stats.scheduled !== count("scheduled"))
      fail(`${where}: ${stats.scheduled} scheduled, model ${count("scheduled")}`)
    if (stats.accepted !== accepted) fail(`${where}: accepted ${stats.accepted}, model ${accepted}`)
    const finals = stats.done + stats.failed + stats.cancelled
    if (retaining) {
      for (const state of ["done", "failed", "cancelled"] as const) {
        if (stats[state] !== count(state))
          fail(`${where}: ${stats[state]} ${state}, model ${count(state)}`)
      }
      if (stats.removed !== replaced) fail(`${where}: removed ${stats.removed}, model ${replaced}`)
    } else if (finals > (retention?.maxFinished ?? 0)) {
      fail(`${where}: ${finals} final tasks kept, retention allows ${retention?.maxFinished}`)
    }
    if (stats.paused !== count("paused"))
      fail(`${where}: ${stats.paused} paused, model ${count("paused")}`)
    if (stats.scheduled + stats.running + stats.paused + finals !== stats.accepted - stats.removed)
      fail(`${where}: accounting (§14.2)`)
    for (const id of byId.keys()) checkStatus(id, where)
    const top = minPending()
    const earliest = Math.min(top?.[1].slot ?? Number.POSITIVE_INFINITY, breakerAt())
    const expectedNextSlot = earliest === Number.POSITIVE_INFINITY ? undefined : earliest
    if (driver.nextSlot() !== expectedNextSlot)
      fail(`${where}: nextSlot ${driver.nextSlot()}, model ${expectedNextSlot} (§14.5)`)
    for (const m of byId.values()) {
      const info = driver.info(m.id)
      if (m.state === "paused" && info !== undefined) {
        if (info.pausedReason !== m.pausedReason)
          fail(`${where}: ${m.id} paused for ${info.pausedReason}, model ${m.pausedReason}`)
        if (info.scheduledFor !== m.held)
          fail(`${where}: ${m.id} holds ${info.scheduledFor}, model ${m.held} (a held run is kept)`)
      }
    }
    const b = driver.breaker("b")
    if (b?.state !== breaker.state || (b.probe !== undefined) !== breaker.probe >= 0)
      fail(
        `${where}: breaker ${b?.state} probe ${b?.probe}, model ${breaker.state} ${breaker.probe}`,
      )
    if (violations.length > 0) {
      throw new Error(
        `after ${where}:\n  ${violations.join("\n  ")}\ntrace tail:\n  ${trace.slice(-12).join("\n  ")}`,
      )
    }
  }

  commands.forEach((command, k) => {
    const where = `#${k} ${command.kind}`
    starts = 0
    records = []
    takeNow = clock.now()
    switch (command.kind) {
      case "schedule":
        schedule(command.spec, where)
        break
      case "cancel":
        cancel(resolveTarget(command.target), where)
        break
      case "pause":
        pause(resolveTarget(command.target), where)
        break
      case "resume":
        resume(resolveTarget(command.target), where)
        break
      case "update":
        update(resolveTarget(command.target), command.changes, where)
        break
      case "pauseAll":
      case "resumeAll":
      case "cancelAll":
        // Bulk controls act in table order, which the model knows only while nothing is evicted.
        if (retaining) bulk(command.kind, command.tag, where)
        break
      case "runDue":
      case "set": {
        if (command.kind === "set") {
          clock.set(clock.now() + command.by)
          takeNow = clock.now()
        }
        const calledAt = clock.now()
        takeLimit = calledAt
        const n = driver.runDue()
        for (let j = 0; j < 10; j++) if (!dueBreaker()) break
        trace.push(`${where} → ${n}`)
        if (n !== starts) fail(`${where}: runDue returned ${n}, ${starts} runs started`)
        const next = driver.nextSlot()
        if (next !== undefined && next <= calledAt)
          fail(`${where}: slot ${next} was due at ${calledAt} and did not run`)
        break
      }
      case "runUntil":
      case "tick": {
        const end = clock.now() + command.by
        takeLimit = end
        if (command.kind === "runUntil") {
          const n = driver.runUntil(end)
          if (n !== starts) fail(`${where}: runUntil returned ${n}, ${starts} runs started`)
          trace.push(`${where} ${end} → ${n}`)
        } else {
          const returned = driver.tick(end)
          if (returned.length !== records.length || returned.some((r, i) => r !== records[i])) {
            fail(`${where}: tick's records differ from the ones reported to onRun`)
          }
          trace.push(`${where} ${end} → ${returned.length}`)
        }
        for (let j = 0; j < 10; j++) if (!dueBreaker()) break
        if (clock.now() < end) fail(`${where}: clock ${clock.now()} stopped before end ${end}`)
        const next = driver.nextSlot()
        if (next !== undefined && next <= end)
          fail(`${where}: slot ${next} <= end ${end} did not run`)
        break
      }
    }
    afterCommand(where)
  })
  return trace
}

// ------------------------------------------------------------------ properties

describe("§14 invariants over random command sequences", () => {
  it(
    `1-6 hold for any commands, and the trace is a function of the commands and the seed (${RUNS} runs)`,
    () => {
      fc.assert(
        fc.property(
          fc.array(commandArb, { maxLength: 40, size: "max" }),
          fc.integer(),
          (commands, seed) => {
            const first = interpret(commands, { seed })
            const second = interpret(commands, { seed })
            expect(second).toEqual(first)
          },
        ),
        { numRuns: RUNS },
      )
    },
    TIMEOUT,
  )

  it(
    `1-5 hold with a small retention, where final tasks are forgotten (${Math.ceil(RUNS / 4)} runs)`,
    () => {
      fc.assert(
        fc.property(
          fc.array(commandArb, { maxLength: 40, size: "max" }),
          fc.integer({ min: 0, max: 3 }),
          fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
          (commands, maxFinished, maxAgeMs) => {
            interpret(commands, {
              seed: 1,
              retention: { maxFinished, ...(maxAgeMs === undefined ? {} : { maxAgeMs }) },
            })
          },
        ),
        { numRuns: Math.ceil(RUNS / 4) },
      )
    },
    TIMEOUT,
  )

  it("different seeds give different jitter (the seed is really used)", () => {
    const commands: Array<Command> = [
      {
        kind: "schedule",
        spec: {
          id: undefined,
          schedule: { kind: "once", delay: 0 },
          priority: undefined,
          retry: { maxRetries: 2, base: 1000, factor: 2, maxDelay: undefined, jitter: "full" },
          missedRuns: undefined,
          pause: 0,
          behaviour: { failMask: 15, failMode: "throw", advance: 0, actions: [] },
          breaker: false,
          tags: [],
        },
      },
      { kind: "runUntil", by: 10_000 },
    ]
    expect(interpret(commands, { seed: 1 })).not.toEqual(interpret(commands, { seed: 2 }))
  })
})

describe("§14.4 with several runs in flight (the kernel as a worker pool uses it)", () => {
  type PoolCommand =
    | {
        readonly kind: "schedule"
        readonly period: number
        readonly fixedRate: boolean
        readonly id: string
      }
    | { readonly kind: "take" }
    | { readonly kind: "complete"; readonly which: number; readonly fail: boolean }
    | { readonly kind: "advance"; readonly by: number }
    | { readonly kind: "cancel"; readonly id: string }

  const ids = ["p", "q", "r"] as const
  const poolCommandArb: fc.Arbitrary<PoolCommand> = fc.oneof(
    fc.record({
      kind: fc.constant("schedule" as const),
      period: fc.integer({ min: 1, max: 20 }),
      fixedRate: fc.boolean(),
      id: fc.constantFrom(...ids),
    }),
    { weight: 3, arbitrary: fc.constant({ kind: "take" as const }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("complete" as const),
        which: fc.nat(3),
        fail: fc.boolean(),
      }),
    },
    fc.record({ kind: fc.constant("advance" as const), by: fc.integer({ min: 0, max: 50 }) }),
    fc.record({ kind: fc.constant("cancel" as const), id: fc.constantFrom(...ids) }),
  )

  it(
    "a task never has two runs in flight, and takes never start before their slot",
    () => {
      fc.assert(
        fc.property(
          fc.array(poolCommandArb, { maxLength: 60, size: "max" }),
          fc.integer({ min: 1, max: 3 }),
          (commands, pool) => {
            const k = new Kernel.Kernel<string>({ random: Random.seeded(0) })
            let now = 0
            const inFlight: Array<Kernel.Run<string>> = []
            for (const c of commands) {
              switch (c.kind) {
                case "schedule":
                  k.schedule(
                    {
                      id: c.id,
                      job: c.id,
                      schedule: c.fixedRate
                        ? Schedule.fixedRate(c.period)
                        : Schedule.fixedDelay(c.period),
                      retry: { maxRetries: 1, base: 1 },
                    },
                    now,
                  )
                  break
                case "take": {
                  if (inFlight.length >= pool) break
                  const run = k.takeDue(now)
                  if (run === undefined) break
                  expect(run.startedAt).toBeGreaterThanOrEqual(run.scheduledFor)
                  expect(run.startedAt).toBe(now)
                  const twin = inFlight.find(
                    (r) => r.id === run.id && r.generation === run.generation,
                  )
                  expect(twin, `${run.id} taken twice`).toBeUndefined()
                  inFlight.push(run)
                  break
                }
                case "complete": {
                  const [run] = inFlight.splice(c.which % Math.max(1, inFlight.length), 1)
                  if (run !== undefined)
                    k.complete(
                      run,
                      c.fail ? { kind: "failed", error: "x" } : { kind: "succeeded" },
                      now,
                      false,
                    )
                  break
                }
                case "advance":
                  now += c.by
                  break
                case "cancel":
                  k.cancel(c.id, now)
                  break
              }
              k.checkInvariants()
              const stats = k.stats()
              expect(stats.inFlight).toBe(inFlight.length)
              expect(stats.running).toBeLessThanOrEqual(inFlight.length)
            }
          },
        ),
        { numRuns: Math.ceil(RUNS / 2) },
      )
    },
    TIMEOUT,
  )
})
