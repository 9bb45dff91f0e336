import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { initialTransition, setup, transition } from "xstate"
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths } from "xstate/graph"
import { Lifecycle } from "../src/index.ts"

type Snapshot = ReturnType<typeof initialTransition<typeof Lifecycle.machine>>[0]

const contexts: Array<Lifecycle.TaskContext> = []
for (const attempt of [1, 2, 3])
  for (const maxRetries of [0, 1, 2])
    for (const consecutiveFailures of [0, 1, 2])
      for (const pauseAfter of [0, 1, 2, 3])
        for (const pauseRequested of [false, true])
          contexts.push({
            attempt,
            maxRetries,
            runNumber: 4,
            consecutiveFailures,
            pauseAfter,
            pauseRequested,
          })

const eventsFor = (): Array<Lifecycle.TaskEvent> => [
  { type: "START" },
  { type: "SUCCEED", nextSlot: 10 },
  { type: "SUCCEED", nextSlot: undefined },
  { type: "SUCCEED" },
  { type: "FAIL", nextSlot: 10 },
  { type: "FAIL", nextSlot: undefined },
  { type: "FAIL", nextSlot: 10, breakerOpens: true },
  { type: "FAIL", nextSlot: undefined, breakerOpens: true },
  { type: "CANCEL" },
  { type: "PAUSE" },
  { type: "RESUME" },
  { type: "EXPIRE" },
  { type: "HAND_BACK" },
  { type: "UNREADABLE" },
  { type: "TRIGGER" },
  { type: "MANUAL_END" },
  { type: "RETRY" },
]

describe("compiled table", () => {
  it("agrees with XState for every state × event pair, guards included", () => {
    let checked = 0
    for (const state of Lifecycle.states) {
      for (const context of contexts) {
        for (const event of eventsFor()) {
          const [s0] = initialTransition(Lifecycle.machine, {})
          const from = { ...s0, value: state, context } as unknown as Snapshot
          const restored = Lifecycle.machine.resolveState(from)
          const [expected, actions] = transition(Lifecycle.machine, restored, event)
          const ctx = { ...context }
          const edge = Lifecycle.step(
            Lifecycle.states.indexOf(state),
            Lifecycle.events.indexOf(event.type),
            {
              context: ctx,
              event,
            },
          )
          const target = edge === undefined ? state : Lifecycle.states[edge.target]
          expect({ state: target, context: ctx }).toEqual({
            state: expected.value,
            context: expected.context,
          })
          const effects = actions.map((a) => a.type).filter((t) => t.startsWith("schedule"))
          expect(edge?.effect ?? "none").toBe(effects[0] ?? "none")
          checked++
        }
      }
    }
    expect(checked).toBe(Lifecycle.states.length * contexts.length * eventsFor().length)
    // Thousands of XState transitions: seconds on a loaded machine, never a verdict on its speed.
  }, 120_000)
})

// ---- paths generated from the machine with xstate/graph ----

const graphEvents: Array<Lifecycle.TaskEvent> = [
  { type: "START" },
  { type: "SUCCEED", nextSlot: 10 },
  { type: "SUCCEED", nextSlot: undefined },
  { type: "FAIL", nextSlot: 10 },
  { type: "FAIL", nextSlot: undefined },
  { type: "FAIL", nextSlot: 10, breakerOpens: true },
  { type: "CANCEL" },
  { type: "PAUSE" },
  { type: "RESUME" },
  { type: "EXPIRE" },
  { type: "HAND_BACK" },
  { type: "UNREADABLE" },
  { type: "TRIGGER" },
  { type: "MANUAL_END" },
  { type: "RETRY" },
]

/** What the guards read, bounded so that traversal ends (runNumber and failures only grow). */
const key = (s: Snapshot): string =>
  `${String(s.value)}|a${s.context.attempt}|c${Math.min(s.context.consecutiveFailures, 3)}|r${
    s.context.runNumber > 0 ? 1 : 0
  }|p${s.context.pauseRequested === true ? 1 : 0}`

const eventKey = (e: Lifecycle.TaskEvent | undefined): string =>
  e === undefined
    ? ""
    : `${e.type}${"nextSlot" in e && e.nextSlot !== undefined ? "+next" : ""}${
        "breakerOpens" in e && e.breakerOpens === true ? "+breaker" : ""
      }`

/** The edge is part of the vertex, so shortest paths cover every transition, not only every state. */
const serializeState = (s: Snapshot, e: Lifecycle.TaskEvent | undefined, prev?: Snapshot) =>
  `${key(s)} <- ${eventKey(e)} <- ${prev === undefined ? "" : key(prev)}`

const inputs: Array<Lifecycle.TaskInput> = []
for (const maxRetries of [0, 1, 2])
  for (const pauseAfter of [0, 1, 2]) inputs.push({ maxRetries, pauseAfter })

/** Replays `events` on the compiled table and on XState, asserting agreement after every step. */
const replay = (
  input: Lifecycle.TaskInput,
  events: ReadonlyArray<Lifecycle.TaskEvent>,
  used?: Set<string>,
): Snapshot => {
  let [expected] = initialTransition(Lifecycle.machine, input)
  let state = Lifecycle.states.indexOf(expected.value as Lifecycle.TaskState)
  const ctx = { ...expected.context }
  for (const event of events) {
    const e = Lifecycle.events.indexOf(event.type)
    const edge = Lifecycle.step(state, e, { context: ctx, event })
    if (edge !== undefined) {
      state = edge.target
      used?.add(edgeIndex(edge))
    }
    const [next, actions] = transition(Lifecycle.machine, expected, event)
    expected = next
    expect({ state: Lifecycle.states[state], context: ctx }).toEqual({
      state: expected.value,
      context: expected.context,
    })
    const effects = actions.map((a) => a.type).filter((t) => t.startsWith("schedule"))
    expect(edge?.effect ?? "none").toBe(effects[0] ?? "none")
  }
  return expected
}

const edgeIndex = (edge: Lifecycle.Edge): string => {
  for (let i = 0; i < Lifecycle.compiled.length; i++) {
    const j = (Lifecycle.compiled[i] as ReadonlyArray<Lifecycle.Edge>).indexOf(edge)
    if (j >= 0) return `${i}.${j}`
  }
  throw new Error("edge not in the compiled table")
}

describe("paths from xstate/graph", () => {
  describe.each(inputs)("input %o", (input) => {
    const paths = getShortestPaths(Lifecycle.machine, {
      input,
      events: graphEvents,
      serializeState,
    })

    it("has a shortest path to every (state, incoming transition) pair", () => {
      // Every state of the machine is reached by some path.
      const reached = new Set(paths.map((p) => String(p.state.value)))
      expect([...reached].sort()).toEqual([...Lifecycle.states].sort())
    })

    it("replays every shortest transition path on the compiled table exactly as XState does", () => {
      expect(paths.length).toBeGreaterThan(10)
      for (const path of paths) {
        const events = path.steps.slice(1).map((s) => s.event)
        const name = `${events.map(eventKey).join(" → ") || "(initial)"} ⇒ ${key(path.state)}`
        try {
          expect(key(replay(input, events))).toBe(key(path.state))
        } catch (error) {
          throw new Error(`path ${name}: ${String(error)}`)
        }
      }
      // Hundreds of XState replays: seconds on a loaded machine, never a verdict on its speed.
    }, 120_000)

    it("every reachable state × event edge of the adjacency map matches the compiled step", () => {
      const adjacency = getAdjacencyMap(Lifecycle.machine, {
        input,
        events: graphEvents,
        serializeState: (s) => key(s),
      })
      const edges = adjacencyMapToArray(adjacency)
      expect(edges.length).toBeGreaterThan(0)
      for (const { state, event, nextState } of edges) {
        const ctx = { ...state.context }
        const edge = Lifecycle.step(
          Lifecycle.states.indexOf(state.value as Lifecycle.TaskState),
          Lifecycle.events.indexOf(event.type),
          { context: ctx, event },
        )
        const target =
          edge === undefined ? String(state.value) : (Lifecycle.states[edge.target] as string)
        expect({ state: target, context: ctx }).toEqual({
          state: nextState.value,
          context: nextState.context,
        })
      }
    })
  })

  // Computes every input's shortest paths again: CPU-bound, past Vitest's 5 s default on a busy
  // two-core machine (and then a mutation run's dry run fails), so its bound is generous.
  it("together, the paths take every edge of the compiled table", () => {
    const used = new Set<string>()
    for (const input of inputs) {
      for (const path of getShortestPaths(Lifecycle.machine, {
        input,
        events: graphEvents,
        serializeState,
      })) {
        replay(
          input,
          path.steps.slice(1).map((s) => s.event),
          used,
        )
      }
    }
    const all = new Set<string>()
    Lifecycle.compiled.forEach((edges, i) => {
      edges.forEach((_edge, j) => {
        all.add(`${i}.${j}`)
      })
    })
    expect([...used].sort()).toEqual([...all].sort())
  }, 120_000)
})

describe("random event sequences", () => {
  it("the compiled table and XState agree on any sequence of events", () => {
    const event = fc.constantFrom(...graphEvents)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(event, { maxLength: 25 }),
        (maxRetries, pauseAfter, events) => {
          replay({ maxRetries, pauseAfter }, events)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe("models", () => {
  it("lists the six states and marks the last three final", () => {
    expect(Lifecycle.states).toEqual([
      "scheduled",
      "running",
      "paused",
      "done",
      "failed",
      "cancelled",
    ])
    expect(Lifecycle.states.filter(Lifecycle.isFinal)).toEqual(["done", "failed", "cancelled"])
    for (const state of ["done", "cancelled"] as const) {
      expect(Lifecycle.machine.root.states[state]?.type).toBe("final")
    }
    // SPEC §19.2: `failed` answers RETRY, so XState must not treat it as a final node.
    expect(Lifecycle.machine.root.states.failed?.type).toBe("atomic")
  })

  it("final states ignore every event, but a failed task takes RETRY (SPEC §19.2)", () => {
    for (const state of ["done", "failed", "cancelled"] as const) {
      for (const event of Lifecycle.events) {
        const s = Lifecycle.states.indexOf(state)
        const edges =
          Lifecycle.compiled[s * Lifecycle.events.length + Lifecycle.events.indexOf(event)]
        if (state === "failed" && event === "RETRY") {
          expect(edges?.map((e) => [Lifecycle.states[e.target], e.effect])).toEqual([
            ["scheduled", "scheduleNow"],
          ])
        } else expect(edges).toEqual([])
      }
    }
  })

  it("SPEC §19.1: TRIGGER only from scheduled; MANUAL_END keeps the run aside, or holds it", () => {
    const at = (state: Lifecycle.TaskState, event: Lifecycle.TaskEvent["type"]) =>
      (
        Lifecycle.compiled[
          Lifecycle.states.indexOf(state) * Lifecycle.events.length +
            Lifecycle.events.indexOf(event)
        ] ?? []
      ).map((e) => [Lifecycle.states[e.target], e.effect])
    expect(at("scheduled", "TRIGGER")).toEqual([["scheduled", "scheduleManual"]])
    for (const state of ["running", "paused", "done", "failed", "cancelled"] as const)
      expect(at(state, "TRIGGER")).toEqual([])
    expect(at("running", "MANUAL_END")).toEqual([
      ["paused", "scheduleKept"],
      ["scheduled", "scheduleKept"],
    ])
    for (const state of ["scheduled", "running", "paused", "done", "cancelled"] as const)
      expect(at(state, "RETRY")).toEqual([])
  })

  it("SPEC §5.5: HAND_BACK and UNREADABLE only from running; a hand-back gives its run number back", () => {
    const at = (state: Lifecycle.TaskState, event: Lifecycle.TaskEvent["type"]) =>
      (
        Lifecycle.compiled[
          Lifecycle.states.indexOf(state) * Lifecycle.events.length +
            Lifecycle.events.indexOf(event)
        ] ?? []
      ).map((e) => Lifecycle.states[e.target])
    expect(at("running", "HAND_BACK")).toEqual(["paused", "scheduled"])
    expect(at("running", "UNREADABLE")).toEqual(["failed"])
    for (const state of ["scheduled", "paused", "done", "failed", "cancelled"] as const) {
      expect(at(state, "HAND_BACK")).toEqual([])
      expect(at(state, "UNREADABLE")).toEqual([])
    }
    const [s0] = initialTransition(Lifecycle.machine, { maxRetries: 2 })
    const [s1] = transition(Lifecycle.machine, s0, { type: "START" })
    const [s2] = transition(Lifecycle.machine, s1, { type: "HAND_BACK" })
    expect([s2.value, s2.context]).toEqual(["scheduled", s0.context])
    const [p1] = transition(Lifecycle.machine, s1, { type: "PAUSE" })
    const [p2] = transition(Lifecycle.machine, p1, { type: "HAND_BACK" })
    expect([p2.value, p2.context.runNumber, p2.context.pauseRequested]).toEqual([
      "paused",
      0,
      false,
    ])
    expect(Lifecycle.storeEvents).toEqual(["HAND_BACK", "UNREADABLE"])
  })
})

describe("constructors", () => {
  it("compile refuses a machine with an action or guard it cannot map", () => {
    const withAction = setup({
      types: { context: {} as Lifecycle.TaskContext, events: {} as Lifecycle.TaskEvent },
      actions: { notify: () => {} },
    }).createMachine({
      id: "task",
      initial: "scheduled",
      context: { attempt: 1, maxRetries: 0, runNumber: 0, consecutiveFailures: 0, pauseAfter: 0 },
      states: {
        scheduled: { on: { START: { target: "running", actions: "notify" } } },
        running: {},
        done: { type: "final" },
        failed: { type: "final" },
        cancelled: { type: "final" },
      },
    })
    expect(() => Lifecycle.compile(withAction as unknown as typeof Lifecycle.machine)).toThrow(
      /unknown action notify/,
    )
    const withGuard = setup({
      types: { context: {} as Lifecycle.TaskContext, events: {} as Lifecycle.TaskEvent },
      guards: { sometimes: () => true },
    }).createMachine({
      id: "task",
      initial: "scheduled",
      context: { attempt: 1, maxRetries: 0, runNumber: 0, consecutiveFailures: 0, pauseAfter: 0 },
      states: {
        scheduled: { on: { START: { target: "running", guard: "sometimes" } } },
        running: {},
        done: { type: "final" },
        failed: { type: "final" },
        cancelled: { type: "final" },
      },
    })
    // The guard exists in this machine's implementations, so it maps; drop it to see the refusal.
    ;(withGuard.implementations.guards as Record<string, unknown>).sometimes = undefined
    expect(() => Lifecycle.compile(withGuard as unknown as typeof Lifecycle.machine)).toThrow(
      /unknown guard sometimes/,
    )
  })

  it("compiling the machine again gives the same table shape", () => {
    const again = Lifecycle.compile()
    expect(again.map((edges) => edges.map((e) => [e.target, e.effect, e.ops.length]))).toEqual(
      Lifecycle.compiled.map((edges) => edges.map((e) => [e.target, e.effect, e.ops.length])),
    )
  })
})

describe("compile: what it reads from a machine's definition", () => {
  const context = { attempt: 1, maxRetries: 0, runNumber: 0, consecutiveFailures: 0, pauseAfter: 0 }
  const noop = () => {}
  /** A flat machine on the task's states, with `running` configured as given. */
  const machineWith = (running: object, extra: object = {}) =>
    setup({
      types: { context: {} as Lifecycle.TaskContext, events: {} as Lifecycle.TaskEvent },
      guards: Lifecycle.guards,
      actions: { startRun: noop, scheduleNext: noop, scheduleLater: noop },
    }).createMachine({
      id: "task",
      initial: "scheduled",
      context,
      states: {
        scheduled: {},
        running,
        paused: {},
        done: { type: "final" },
        failed: { type: "final" },
        cancelled: { type: "final" },
        ...extra,
      },
    }) as unknown as typeof Lifecycle.machine
  const edge = (table: ReadonlyArray<ReadonlyArray<Lifecycle.Edge>>, event: number) =>
    table[Lifecycle.RUNNING * Lifecycle.events.length + event] as ReadonlyArray<Lifecycle.Edge>

  it("guards and actions given as objects map as when given by name", () => {
    const table = Lifecycle.compile(
      machineWith({
        on: {
          SUCCEED: {
            guard: { type: "hasNextSlot" },
            target: "scheduled",
            actions: [{ type: "startRun" }, { type: "scheduleNext" }],
          },
        },
      }),
    )
    const [e] = edge(table, Lifecycle.SUCCEED)
    expect(e?.guard).toBe(Lifecycle.guards.hasNextSlot)
    expect(e?.target).toBe(Lifecycle.SCHEDULED)
    expect(e?.ops).toEqual([Lifecycle.ops.startRun])
    expect(e?.effect).toBe("scheduleNext")
    // No target: the edge stays in its state; no guard: it always holds.
    const [stay] = edge(
      Lifecycle.compile(machineWith({ on: { PAUSE: { actions: "startRun" } } })),
      Lifecycle.PAUSE,
    )
    expect(stay).toMatchObject({ guard: undefined, target: Lifecycle.RUNNING, effect: "none" })
  })

  it("refuses an effect it does not know, a state it lacks and a target outside the table", () => {
    expect(() =>
      Lifecycle.compile(machineWith({ on: { SUCCEED: { actions: "scheduleLater" } } })),
    ).toThrow(/^unknown action scheduleLater$/)
    const noPaused = setup({
      types: { context: {} as Lifecycle.TaskContext, events: {} as Lifecycle.TaskEvent },
    }).createMachine({
      id: "task",
      initial: "scheduled",
      context,
      states: { scheduled: {}, running: {} },
    }) as unknown as typeof Lifecycle.machine
    expect(() => Lifecycle.compile(noPaused)).toThrow(/^machine has no state paused$/)
    expect(() =>
      Lifecycle.compile(machineWith({ on: { SUCCEED: { target: "limbo" } } }, { limbo: {} })),
    ).toThrow(/^unknown target limbo$/)
  })
})

describe("machine: its context without input", () => {
  it("a machine started with no input allows no retries and never pauses on failures", () => {
    const [s] = initialTransition(Lifecycle.machine, undefined as never)
    expect(s.value).toBe("scheduled")
    expect(s.context).toEqual({
      attempt: 1,
      maxRetries: 0,
      runNumber: 0,
      consecutiveFailures: 0,
      pauseAfter: 0,
      pauseRequested: false,
    })
    const [t] = initialTransition(Lifecycle.machine, { maxRetries: 2, pauseAfter: 3 })
    expect(t.context).toMatchObject({ maxRetries: 2, pauseAfter: 3 })
  })
})
