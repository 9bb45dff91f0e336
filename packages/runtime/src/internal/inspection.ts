/**
 * @internal
 * The inspection hub behind the `inspect` option: it turns the engine's listener calls into
 * XState inspection events, as if the timing actor were an XState actor whose children are the
 * tasks, each an actor of `Lifecycle.machine`.
 *
 * Ground rules:
 * 1. Exactness comes from XState itself: each live task keeps an XState snapshot, advanced with
 *    XState's pure step (the machine's `transition` with a reused scope, the path
 *    `transition(Lifecycle.machine, snapshot, event)` takes) on the same events the kernel's
 *    compiled table took (START, SUCCEED/FAIL with the next slot, CANCEL). The hub never computes
 *    a state or a context of its own.
 * 2. The hub exists only when the scheduler is built with `inspect`: without it the engine's
 *    listener is the user's (or none) and nothing here runs.
 * 3. Memory is bounded by live tasks: a task's entry goes when it reaches a final state. A task
 *    cancelled while running keeps a small entry until its run reports (at most `workers` of
 *    those), because XState still delivers (and inspects) an event sent to a final actor.
 * 4. Everything runs inside the engine's synchronous steps, in the order things happened. An
 *    observer that throws is reported to its `error` callback and otherwise ignored: inspection
 *    never breaks the scheduler.
 */
import { Lifecycle, type Task } from "@tickwork/core"
import {
  type Actor,
  type AnyActorScope,
  type AnyEventObject,
  createActor,
  type ExecutableActionObject,
  type InspectionEvent,
  type Observer,
  type SnapshotFrom,
} from "xstate"
import type * as Ledger from "../Ledger.ts"
import type { AcceptedOptions, Listener } from "../Recorder.ts"

/** What XState's `createActor(logic, { inspect })` takes. */
export type InspectObserver =
  | Observer<InspectionEvent>
  | ((inspectionEvent: InspectionEvent) => void)

/** A task's XState snapshot. */
export type TaskSnapshot = SnapshotFrom<typeof Lifecycle.machine>

/** A live XState actor of `Lifecycle.machine` that follows one task. */
export type TaskActor = Actor<typeof Lifecycle.machine>

/**
 * XState's pure step, without its per-call cost: `transition()` builds a throw-away actor and
 * actor system on every call (20–50 µs); the machine's own `transition` with one reused scope
 * takes the same path in 4–7 µs. The scope's `actionExecutor` collects the actions the step
 * would execute, unexecuted, exactly as `transition()` returns them.
 */
const pure = (() => {
  const self = createActor(Lifecycle.machine, { input: {} })
  let fired: Array<ExecutableActionObject> = []
  const scope = {
    self,
    id: "",
    sessionId: "",
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    system: self.system,
    actionExecutor: (action: ExecutableActionObject) => {
      fired.push(action)
    },
  } as unknown as AnyActorScope
  /** Initial snapshots by input: tasks with the same input share one (snapshots are immutable). */
  const initials = new Map<string, TaskSnapshot>()
  /**
   * XState's step results by snapshot and event kind. The machine is pure and its events carry
   * nothing its snapshots keep: the guards read only whether `nextSlot` is given (never its
   * value) and no action assigns from the event. So a step is a function of (snapshot, event
   * type, nextSlot given), and a snapshot reached again — a one-shot's `scheduled`, `running`,
   * `done` — steps without XState: a burst of one-shots shares three snapshots. Entries go with
   * their snapshot (a WeakMap), so a recurring task's ever-new counters hold no memory.
   */
  const steps = new WeakMap<
    TaskSnapshot,
    Map<string, [TaskSnapshot, ReadonlyArray<ExecutableActionObject>]>
  >()
  return {
    initial: (input: Lifecycle.TaskInput): TaskSnapshot => {
      const key = `${input.maxRetries}|${input.pauseAfter}`
      let snapshot = initials.get(key)
      if (snapshot === undefined) {
        snapshot = Lifecycle.machine.getInitialSnapshot(scope, input)
        initials.set(key, snapshot)
      }
      return snapshot
    },
    step: (
      snapshot: TaskSnapshot,
      event: Lifecycle.TaskEvent,
    ): [TaskSnapshot, ReadonlyArray<ExecutableActionObject>] => {
      const key =
        "nextSlot" in event && event.nextSlot !== undefined ? `${event.type}+next` : event.type
      let known = steps.get(snapshot)
      const hit = known?.get(key)
      if (hit !== undefined) return hit
      fired = []
      const result: [TaskSnapshot, ReadonlyArray<ExecutableActionObject>] = [
        Lifecycle.machine.transition(snapshot, event, scope),
        fired,
      ]
      if (known === undefined) {
        known = new Map()
        steps.set(snapshot, known)
      }
      known.set(key, result)
      return result
    },
  }
})()

/** Timing actors made so far in this process: numbers their session ids. */
let sessions = 0

/**
 * An actor as inspection events show it: enough of XState's `ActorRef` for inspectors
 * (`@statelyai/inspect` reads `id`, `sessionId`, `_parent`, `logic.config` and `getSnapshot()`).
 * It is a view: `send` does nothing, the scheduler drives the task.
 */
export class InspectedActor {
  /** The actor's id: `"timing"`, or the task's id. */
  readonly id: string
  /** Unique in the process: `tickwork:<n>` for a timing actor, `tickwork:<n>/<task id>/<generation>` for a task. */
  readonly sessionId: string
  /** The timing actor for a task; `undefined` for the timing actor. */
  readonly _parent: InspectedActor | undefined
  /** `Lifecycle.machine` for a task, so inspectors draw its real diagram; none for the timing actor. */
  readonly logic: typeof Lifecycle.machine | undefined
  /** The latest snapshot. Replaced (never mutated) at each step. */
  snapshot: TaskSnapshot | TimingSnapshot

  constructor(
    id: string,
    sessionId: string,
    parent: InspectedActor | undefined,
    logic: typeof Lifecycle.machine | undefined,
    snapshot: TaskSnapshot | TimingSnapshot,
  ) {
    this.id = id
    this.sessionId = sessionId
    this._parent = parent
    this.logic = logic
    this.snapshot = snapshot
  }

  getSnapshot(): TaskSnapshot | TimingSnapshot {
    return this.snapshot
  }

  send(_event: AnyEventObject): void {}
}

/** The timing actor's snapshot: always active while the scheduler runs. */
export interface TimingSnapshot {
  readonly status: "active"
  readonly output: undefined
  readonly error: undefined
}

interface Entry {
  readonly ref: InspectedActor
  readonly generation: number
  /** The machine input, for restoring watchers. */
  readonly input: Lifecycle.TaskInput
  snapshot: TaskSnapshot
  /** Live actors following this task (`Inspect.watch`); usually none. */
  watchers: Set<TaskActor> | undefined
}

const lateKey = (id: string, generation: number) => `${generation}:${id}`

/** The machine event a finished run stands for. */
export const completionEvent = (record: Task.RunRecord): Lifecycle.TaskEvent => {
  const type = record.outcome.kind === "succeeded" ? "SUCCEED" : "FAIL"
  return record.continuation === "next" && record.nextSlot !== undefined
    ? { type, nextSlot: record.nextSlot }
    : { type }
}

/** The machine input of a task accepted with `options`. */
export const inputOf = (options: AcceptedOptions): Lifecycle.TaskInput => ({
  maxRetries: options.retry?.maxRetries ?? 0,
  pauseAfter: options.pauseAfterConsecutiveFailures ?? 0,
})

const START: Lifecycle.TaskEvent = { type: "START" }
const CANCEL: Lifecycle.TaskEvent = { type: "CANCEL" }
const PAUSE: Lifecycle.TaskEvent = { type: "PAUSE" }
const RESUME: Lifecycle.TaskEvent = { type: "RESUME" }
const EXPIRE: Lifecycle.TaskEvent = { type: "EXPIRE" }

export class Inspection implements Listener {
  /** The timing actor: the root and every task's parent. */
  readonly root: InspectedActor
  /** Live tasks by id. */
  private readonly tasks = new Map<string, Entry>()
  /** Tasks cancelled while running, until their run reports (see ground rule 3). */
  private readonly late = new Map<string, Entry>()
  private readonly next: (event: InspectionEvent) => void
  private readonly error: ((error: unknown) => void) | undefined

  constructor(observer: InspectObserver) {
    if (typeof observer === "function") {
      this.next = observer
      this.error = undefined
    } else {
      this.next = (event) => observer.next?.(event)
      this.error = observer.error === undefined ? undefined : (e) => observer.error?.(e)
    }
    const session = `tickwork:${sessions++}`
    this.root = new InspectedActor("timing", session, undefined, undefined, {
      status: "active",
      output: undefined,
      error: undefined,
    })
    const init = { type: "xstate.init" }
    this.emit({ type: "@xstate.actor", actorRef: this.root, rootId: session })
    this.emit({
      type: "@xstate.event",
      actorRef: this.root,
      rootId: session,
      sourceRef: undefined,
      event: init,
    })
    this.emit({
      type: "@xstate.snapshot",
      actorRef: this.root,
      rootId: session,
      event: init,
      snapshot: this.root.snapshot,
    })
  }

  /** Live tasks tracked (for tests of ground rule 3). */
  get size(): number {
    return this.tasks.size + this.late.size
  }

  /** The current XState snapshot of a live task. */
  snapshotOf(id: string): TaskSnapshot | undefined {
    return this.tasks.get(id)?.snapshot
  }

  /**
   * A started XState actor restored to a live task's snapshot, fed the task's events from now
   * on until it is final or `unwatch`ed; `undefined` for an unknown or final task.
   */
  watch(id: string): TaskActor | undefined {
    const entry = this.tasks.get(id)
    if (entry === undefined) return undefined
    const actor = createActor(Lifecycle.machine, {
      id,
      snapshot: entry.snapshot,
      input: entry.input,
    })
    actor.start()
    if (entry.watchers === undefined) entry.watchers = new Set()
    entry.watchers.add(actor)
    return actor
  }

  unwatch(id: string, actor: TaskActor): void {
    this.tasks.get(id)?.watchers?.delete(actor)
  }

  // ------------------------------------------------------------ the engine's listener

  accepted(id: Task.TaskId, info: Task.TaskInfo, options: AcceptedOptions): void {
    const input = inputOf(options)
    const snapshot = pure.initial(input)
    const ref = new InspectedActor(
      id,
      `${this.root.sessionId}/${id}/${info.generation}`,
      this.root,
      Lifecycle.machine,
      snapshot,
    )
    this.tasks.set(id, { ref, generation: info.generation, input, snapshot, watchers: undefined })
    const rootId = this.root.sessionId
    const init = { type: "xstate.init", input }
    // As XState reports a spawned child: the actor, its init event from the parent, its snapshot.
    this.emit({ type: "@xstate.actor", actorRef: ref, rootId })
    this.emit({ type: "@xstate.event", actorRef: ref, rootId, sourceRef: this.root, event: init })
    this.emit({ type: "@xstate.snapshot", actorRef: ref, rootId, event: init, snapshot })
  }

  started(run: Task.RunInfo): void {
    const entry = this.tasks.get(run.id)
    if (entry !== undefined && entry.generation === run.generation) {
      this.advance(entry, START, this.root)
    }
  }

  completed(record: Task.RunRecord): void {
    const event = completionEvent(record)
    const entry = this.tasks.get(record.id)
    if (entry !== undefined && entry.generation === record.generation) {
      this.advance(entry, event, this.root)
      return
    }
    // The run of a task cancelled while running: XState inspects the event, the final actor
    // ignores it (no snapshot).
    const key = lateKey(record.id, record.generation)
    const late = this.late.get(key)
    if (late !== undefined) {
      this.late.delete(key)
      this.emit({
        type: "@xstate.event",
        actorRef: late.ref,
        rootId: this.root.sessionId,
        sourceRef: this.root,
        event,
      })
    }
  }

  cancelled(occurrence: Ledger.Cancelled): void {
    const entry = this.tasks.get(occurrence.id)
    if (entry === undefined || entry.generation !== occurrence.generation) return
    this.advance(entry, CANCEL, undefined)
    if (occurrence.from === "running") {
      entry.watchers = undefined
      this.late.set(lateKey(occurrence.id, occurrence.generation), entry)
    }
  }

  /**
   * A control occurrence as the machine's event: a pause of a task not already paused by its
   * failed run (PAUSE), a resume (RESUME), an expired one-shot (EXPIRE). Skipped slots and
   * breaker transitions move no task.
   */
  occurred(occurrence: Task.Occurrence): void {
    if (occurrence.kind === "breaker" || occurrence.kind === "skipped") return
    const entry = this.tasks.get(occurrence.id)
    if (entry === undefined || entry.generation !== occurrence.generation) return
    const value = entry.snapshot.value
    switch (occurrence.kind) {
      case "paused":
        // A failed run that paused its task already moved it with FAIL.
        if (value === "scheduled" || value === "running") this.advance(entry, PAUSE, undefined)
        return
      case "resumed":
        if (value === "paused" || value === "running") this.advance(entry, RESUME, undefined)
        return
      case "expired":
        if (value === "scheduled") this.advance(entry, EXPIRE, this.root)
        return
    }
  }

  // ------------------------------------------------------------ steps

  /** Applies `event` with XState's pure transition and reports it as XState would. */
  private advance(
    entry: Entry,
    event: Lifecycle.TaskEvent,
    source: InspectedActor | undefined,
  ): void {
    const ref = entry.ref
    const rootId = this.root.sessionId
    this.emit({ type: "@xstate.event", actorRef: ref, rootId, sourceRef: source, event })
    const [snapshot, actions] = pure.step(entry.snapshot, event)
    if (snapshot === entry.snapshot) return // ignored by the machine, as XState reports it
    for (const action of actions) {
      this.emit({
        type: "@xstate.action",
        actorRef: ref,
        rootId,
        action: { type: action.type, params: action.params },
      })
    }
    entry.snapshot = snapshot
    ref.snapshot = snapshot
    this.emit({ type: "@xstate.snapshot", actorRef: ref, rootId, event, snapshot })
    const watchers = entry.watchers
    if (watchers !== undefined) for (const actor of watchers) actor.send(event)
    if (snapshot.status !== "active") this.tasks.delete(ref.id)
  }

  private emit(event: InspectionEvent): void {
    try {
      this.next(event)
    } catch (error) {
      try {
        this.error?.(error)
      } catch {
        // Inspection never breaks the scheduler (ground rule 4).
      }
    }
  }
}

/** Combines the hub with the user's listener: the hub first, then theirs. */
export const combine = (inspection: Inspection, listener: Listener | undefined): Listener => {
  if (listener === undefined) return inspection
  return {
    accepted: (id, info, options) => {
      inspection.accepted(id, info, options)
      listener.accepted?.(id, info, options)
    },
    started: (run) => {
      inspection.started(run)
      listener.started?.(run)
    },
    completed: (record) => {
      inspection.completed(record)
      listener.completed?.(record)
    },
    cancelled: (occurrence) => {
      inspection.cancelled(occurrence)
      listener.cancelled?.(occurrence)
    },
    occurred: (occurrence) => {
      inspection.occurred(occurrence)
      listener.occurred?.(occurrence)
    },
  }
}

/** Where an inspected scheduler's service value carries its hub (for `Inspect.watch`). */
const hubKey: unique symbol = Symbol.for("@tickwork/runtime/Inspection")

/** Attaches the hub to the scheduler's service value: no table outside the service. */
export const attach = (service: object, inspection: Inspection): void => {
  Object.defineProperty(service, hubKey, { value: inspection, enumerable: false })
}

/** The hub of an inspected scheduler, or `undefined` when it was built without `inspect`. */
export const hubOf = (service: object): Inspection | undefined =>
  (service as { readonly [hubKey]?: Inspection })[hubKey]
