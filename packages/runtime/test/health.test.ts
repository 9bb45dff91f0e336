/**
 * Health (issue 28, "a worker that cannot make progress says so"): the pure assessment, the
 * in-memory scheduler's `health` in virtual time, and the probe route's status codes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Metric, Scope } from "effect"
import { HttpRouter } from "effect/http"
import { TestClock } from "effect/testing"
import { Health, Schedule, Scheduler } from "../src/index.ts"

const bounds: Health.Bounds = { stallMs: 1_000, storeMs: 5_000 }

describe("Health.assess", () => {
  it("ok with nothing due, or with runs starting", () => {
    expect(Health.assess({ now: 10_000, dueSince: undefined, lastStartedAt: 0 }, bounds)).toEqual({
      status: "ok",
      reasons: [],
    })
    expect(Health.assess({ now: 10_000, dueSince: 9_500, lastStartedAt: 0 }, bounds).status).toBe(
      "ok",
    )
  })

  it("stalled: work due and no start for the bound, exactly", () => {
    expect(Health.assess({ now: 10_999, dueSince: 10_000, lastStartedAt: 0 }, bounds).status).toBe(
      "ok",
    )
    const h = Health.assess({ now: 11_000, dueSince: 10_000, lastStartedAt: 0 }, bounds)
    expect(h.status).toBe("unhealthy")
    expect(h.reasons.map((r) => r.code)).toEqual(["stalled"])
  })

  it("behind: work waited the bound but runs still start", () => {
    const h = Health.assess({ now: 20_000, dueSince: 10_000, lastStartedAt: 19_900 }, bounds)
    expect(h).toMatchObject({ status: "degraded", reasons: [{ code: "behind" }] })
  })

  it("store failing: degraded, then unhealthy at the bound; uncommitted and corrupt: unhealthy", () => {
    const base = { now: 10_000, dueSince: undefined, lastStartedAt: 0 }
    expect(Health.assess({ ...base, storeFailingSince: 5_001 }, bounds).status).toBe("degraded")
    expect(Health.assess({ ...base, storeFailingSince: 5_000 }, bounds).status).toBe("unhealthy")
    expect(Health.assess({ ...base, uncommitted: 2 }, bounds).reasons[0]?.code).toBe("uncommitted")
    expect(Health.assess({ ...base, corrupt: "damaged" }, bounds)).toMatchObject({
      status: "unhealthy",
      reasons: [{ code: "store-corrupt", message: "damaged" }],
    })
  })
})

describe("Scheduler.health", () => {
  it.effect("turns unhealthy when every worker is held and work waits for the stall bound", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({
        name: "stall-test",
        workers: 1,
        shutdown: "interrupt",
        shutdownGrace: 0,
        health: { stall: "1 minute" },
      })
      yield* s.schedule({ id: "stuck", schedule: Schedule.once(0), job: Effect.never })
      yield* s.schedule({ id: "waits", schedule: Schedule.once(10), job: Effect.void })
      yield* TestClock.adjust(10)
      expect((yield* s.health).status).toBe("ok")
      yield* TestClock.adjust(59_999)
      expect((yield* s.health).status).toBe("ok")
      yield* TestClock.adjust(1)
      const h = yield* s.health
      expect(h.status).toBe("unhealthy")
      expect(h.reasons[0]?.code).toBe("stalled")
      // The gauge holds the last assessment: 2 for unhealthy, under the scheduler's label.
      const gauges = (yield* Metric.snapshot).filter((m) => m.id === "tickwork_health")
      const mine = gauges.find((m) => m.attributes?.scheduler === "stall-test")
      expect(mine?.state).toMatchObject({ value: 2 })
    }),
  )

  it.effect(
    "the gauge turns unhealthy on a stall in the background, with nobody calling health",
    () =>
      Effect.gen(function* () {
        const gauge = Effect.map(Metric.snapshot, (all) =>
          all.find((m) => m.id === "tickwork_health" && m.attributes?.scheduler === "watched"),
        )
        yield* Scheduler.make({
          name: "watched",
          workers: 1,
          shutdown: "interrupt",
          shutdownGrace: 0,
          health: { stall: "1 minute" },
        }).pipe(
          Effect.tap((s) =>
            Effect.andThen(
              s.schedule({ id: "stuck", schedule: Schedule.once(0), job: Effect.never }),
              // Scheduled later, while the watcher waits: the command wakes it to plan again.
              TestClock.adjust(1_000).pipe(
                Effect.andThen(
                  s.schedule({ id: "waits", schedule: Schedule.once(0), job: Effect.void }),
                ),
              ),
            ),
          ),
        )
        yield* TestClock.adjust(0)
        expect((yield* gauge)?.state).toMatchObject({ value: 0 })
        // "waits" is due at 1 000 and never starts: behind at 61 000, stalled from then on too
        // (the last start was at 0), each seen within Health.refreshMs.
        yield* TestClock.adjust(60_000 - 1)
        expect((yield* gauge)?.state).toMatchObject({ value: 0 })
        yield* TestClock.adjust(1 + Health.refreshMs)
        expect((yield* gauge)?.state).toMatchObject({ value: 2 })
      }),
  )

  it("recheckAt: soon while not ok, at the first possible stall while ok, never with nothing scheduled", () => {
    const ok: Health.Health = { status: "ok", reasons: [] }
    const base = { now: 10_000, lastStartedAt: 0 }
    expect(Health.recheckAt(ok, { ...base, dueSince: undefined }, undefined, bounds, 500)).toBe(
      undefined,
    )
    expect(Health.recheckAt(ok, { ...base, dueSince: undefined }, 20_000, bounds, 500)).toBe(21_000)
    expect(Health.recheckAt(ok, { ...base, dueSince: 9_800 }, 9_800, bounds, 500)).toBe(10_800)
    expect(Health.recheckAt(ok, { ...base, dueSince: 9_000 }, 9_000, bounds, 500)).toBe(10_500)
    const bad: Health.Health = { status: "degraded", reasons: [] }
    expect(Health.recheckAt(bad, { ...base, dueSince: undefined }, undefined, bounds, 500)).toBe(
      10_500,
    )
  })

  it.effect("a bad health option is InvalidOption naming it", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const exit = yield* Effect.exit(
        Scheduler.make({ health: { stal: 1 } as never }).pipe(Scope.provide(scope)),
      )
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("health.stal")
      yield* Scope.close(scope, Exit.void)
    }),
  )
})

describe("the probe route", () => {
  const ask = async (health: Health.Health, failOn?: "unhealthy" | "degraded") => {
    const { handler, dispose } = HttpRouter.toWebHandler(
      Health.layerHttp({ path: "/livez", check: Effect.succeed(health), failOn }),
      { disableLogger: true },
    )
    try {
      const response = await handler(new Request("http://localhost/livez"))
      return { status: response.status, body: await response.json() }
    } finally {
      await dispose()
    }
  }
  const degraded: Health.Health = {
    status: "degraded",
    reasons: [{ code: "store-failing", status: "degraded", message: "failing" }],
  }

  it("answers 200 below failOn and 503 from it, with the health as JSON", async () => {
    expect(await ask({ status: "ok", reasons: [] })).toEqual({
      status: 200,
      body: { status: "ok", reasons: [] },
    })
    expect((await ask(degraded)).status).toBe(200)
    expect((await ask(degraded, "degraded")).status).toBe(503)
    expect((await ask({ status: "unhealthy", reasons: [] })).status).toBe(503)
  })
})
