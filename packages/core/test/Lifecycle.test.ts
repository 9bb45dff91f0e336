import { describe, expect, it } from "vitest"
import { initialTransition, transition } from "xstate"
import { Lifecycle } from "../src/index.ts"

type Snapshot = ReturnType<typeof initialTransition<typeof Lifecycle.machine>>[0]

const contexts: Array<Lifecycle.TaskContext> = []
for (const attempt of [1, 2, 3])
  for (const maxRetries of [0, 1, 2])
    for (const consecutiveFailures of [0, 1, 2])
      for (const pauseAfter of [0, 1, 2, 3])
        contexts.push({ attempt, maxRetries, runNumber: 4, consecutiveFailures, pauseAfter })

const eventsFor = (): Array<Lifecycle.TaskEvent> => [
  { type: "START" },
  { type: "SUCCEED", nextSlot: 10 },
  { type: "SUCCEED", nextSlot: undefined },
  { type: "SUCCEED" },
  { type: "FAIL", nextSlot: 10 },
  { type: "FAIL", nextSlot: undefined },
  { type: "CANCEL" },
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
          const effects = actions
            .map((a) => a.type)
            .filter((t) => t === "scheduleNext" || t === "scheduleRetry")
          expect(edge?.effect ?? "none").toBe(effects[0] ?? "none")
          checked++
        }
      }
    }
    expect(checked).toBe(Lifecycle.states.length * contexts.length * 7)
  })
})
