/**
 * The durable layer's options (`src/internal/options.ts`), resolved on their own: each absent
 * option takes its documented default, and each bad one is an `InvalidOption` naming the field
 * and the value it was given.
 */
import { Options } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Handler } from "../src/index.ts"
import * as LayerOptions from "../src/internal/options.ts"

const report = Handler.make("report", Schema.Struct({}), () => Effect.void)
const digest = Handler.make("digest", Schema.Struct({}), () => Effect.void)

/** A handler with an empty name: refused as a whole, before its name is checked as an id. */
const noName = { ...report, name: "" }

const resolve = (options: Partial<LayerOptions.LayerOptions>, exclusive = false) =>
  LayerOptions.resolve({ handlers: [report], ...options }, exclusive)

/** The resolved options, failing the test on an error. */
const ok = (options: Partial<LayerOptions.LayerOptions>, exclusive = false) => {
  const r = resolve(options, exclusive)
  if (!("handlers" in r)) throw new Error(`unexpected ${r.message}`)
  return r
}

describe("the durable layer's options", () => {
  it("take their defaults when absent", () => {
    const r = ok({})
    expect(r).toMatchObject({
      names: ["report"],
      claim: true,
      workers: 4,
      claimBatch: 100,
      streamCapacity: 10_000,
      leaseMs: 30_000,
      pollMs: 200,
      takeoverMs: 100,
      windowMs: Options.defaultCatchUpWindow,
      shutdownMs: 30_000,
      graceMs: 5_000,
      shutdown: "drain",
      onShutdown: undefined,
      stallMs: 60_000,
      storeFailureMs: 60_000,
      healthBackground: true,
      retentionMs: 7 * 86_400_000,
      seed: 0,
      runtime: undefined,
      defaultTimeoutMs: 0,
    })
    expect(r.handlers.get("report")).toBe(report)
    expect(r.breakers.size).toBe(0)
    expect(r.owner).toMatch(/^.+:\d+:[0-9a-f]{8}$/)
    // A store only this process uses is never polled: it hears its own writes.
    expect(ok({}, true).pollMs).toBe(Number.POSITIVE_INFINITY)
  })

  it("keep what they are given", () => {
    const onShutdown = () => {}
    const r = ok({
      handlers: [report, digest],
      claim: false,
      workers: 2,
      claimBatch: 7,
      streamCapacity: 9,
      lease: "2 seconds",
      pollInterval: 50,
      takeoverInterval: 1,
      catchUpWindow: false,
      shutdownTimeout: 10,
      shutdownGrace: 20,
      shutdown: "cancel",
      onShutdown,
      health: { stall: 30, storeFailure: 40, background: false },
      retention: false,
      seed: 42,
      owner: "worker-1",
      breakers: { payments: { failures: 3, coolDown: 1_000 } },
      runtime: { defaultTimeout: "5 seconds" },
    })
    expect(r).toMatchObject({
      names: ["report", "digest"],
      claim: false,
      workers: 2,
      claimBatch: 7,
      streamCapacity: 9,
      leaseMs: 2_000,
      pollMs: 50,
      takeoverMs: 1,
      windowMs: Number.POSITIVE_INFINITY,
      shutdownMs: 10,
      graceMs: 20,
      shutdown: "cancel",
      onShutdown,
      stallMs: 30,
      storeFailureMs: 40,
      healthBackground: false,
      retentionMs: Number.POSITIVE_INFINITY,
      seed: 42,
      owner: "worker-1",
      defaultTimeoutMs: 5_000,
    })
    expect(r.breakers.get("payments")).toMatchObject({ failures: 3, coolDown: 1_000 })
    // No run timeout is the same as none given.
    expect(ok({ runtime: { defaultTimeout: false as never } }).defaultTimeoutMs).toBe(0)
  })

  it("take the runtime's shutdown options when the layer gives none of its own", () => {
    const runtime = { shutdownTimeout: 11, shutdownGrace: 12, shutdown: "interrupt" } as const
    expect(ok({ runtime })).toMatchObject({ shutdownMs: 11, graceMs: 12, shutdown: "interrupt" })
    expect(
      ok({ runtime, shutdownTimeout: 21, shutdownGrace: 22, shutdown: "cancel" }),
    ).toMatchObject({ shutdownMs: 21, graceMs: 22, shutdown: "cancel" })
    // The runtime's own shutdown times: its own when given, else the layer's.
    expect(LayerOptions.runtimeShutdown(ok({ runtime }))).toEqual({ shutdownMs: 11, graceMs: 12 })
    expect(LayerOptions.runtimeShutdown(ok({ shutdownTimeout: 31, shutdownGrace: 32 }))).toEqual({
      shutdownMs: 31,
      graceMs: 32,
    })
  })

  it("the runtime's own shutdown times are checked when the layer gives its own", () => {
    const given = { shutdownTimeout: 1, shutdownGrace: 1 }
    expect(
      LayerOptions.runtimeShutdown(ok({ ...given, runtime: { shutdownTimeout: "soon" as never } })),
    ).toMatchObject({ _tag: "InvalidOption", field: "runtime.shutdownTimeout", value: "soon" })
    expect(
      LayerOptions.runtimeShutdown(ok({ ...given, runtime: { shutdownGrace: "soon" as never } })),
    ).toMatchObject({ _tag: "InvalidOption", field: "runtime.shutdownGrace", value: "soon" })
  })

  it("no polling when pollInterval is false; limits per handler (SPEC §20)", () => {
    expect(ok({ pollInterval: false }).pollMs).toBe(Number.POSITIVE_INFINITY)
    const limits = ok({ limits: { handlers: { report: { concurrency: 1 } } } }).limits
    expect(limits).toBeDefined()
  })

  it("a lease of at least 1 second, a duration, and not 0", () => {
    expect(ok({ lease: LayerOptions.MIN_LEASE_MS }).leaseMs).toBe(1_000)
    const message = (given: unknown) => (resolve({ lease: given as never }) as Error).message
    expect(resolve({ lease: 999 })).toMatchObject({
      _tag: "InvalidOption",
      field: "lease",
      value: 999,
    })
    expect(message(999)).toMatch(/^lease must be at least 1000 ms \(1 second; /)
    expect(resolve({ lease: false as never })).toMatchObject({ field: "lease", value: false })
    expect(message(false)).toMatch(/^lease must be a duration/)
    expect(message(0)).toMatch(/^lease must be positive/)
    // A takeover interval that is not a duration says so, not that it is too short.
    const takeover = resolve({ takeoverInterval: "soon" as never }) as Error
    expect(takeover.message).toMatch(/^takeoverInterval /)
    expect(takeover.message).not.toMatch(/at least 1 ms/)
  })

  const bad: ReadonlyArray<readonly [string, Record<string, unknown>, string, unknown]> = [
    ["not an object", { handlers: undefined }, "handlers", undefined],
    ["a handler twice", { handlers: [report, report] }, "handlers", "report"],
    ["not a handler", { handlers: [{ name: "x" }] }, "handlers", { name: "x" }],
    ["a handler with no name", { handlers: [{ ...report, name: "" }] }, "handlers", undefined],
    [
      "an unknown handler key",
      { handlers: [{ ...report, extra: 1 }] },
      'handlers["report"].extra',
      1,
    ],
    [
      "a handler name with NUL",
      { handlers: [{ ...report, name: "a\u0000" }] },
      "handlers",
      "a\u0000",
    ],
    [
      "a result that is not a schema",
      { handlers: [{ ...report, result: 1 }] },
      'handlers["report"].result',
      1,
    ],
    ["workers 0", { workers: 0 }, "workers", 0],
    ["claimBatch 0", { claimBatch: 0 }, "claimBatch", 0],
    ["streamCapacity 0", { streamCapacity: 0 }, "streamCapacity", 0],
    ["lease soon", { lease: "soon" }, "lease", "soon"],
    ["pollInterval soon", { pollInterval: "soon" }, "pollInterval", "soon"],
    ["takeoverInterval soon", { takeoverInterval: "soon" }, "takeoverInterval", "soon"],
    ["takeoverInterval 0", { takeoverInterval: 0 }, "takeoverInterval", 0],
    [
      "takeoverInterval Infinity",
      { takeoverInterval: Number.POSITIVE_INFINITY },
      "takeoverInterval",
      Number.POSITIVE_INFINITY,
    ],
    ["catchUpWindow soon", { catchUpWindow: "soon" }, "catchUpWindow", "soon"],
    ["shutdownTimeout soon", { shutdownTimeout: "soon" }, "shutdownTimeout", "soon"],
    [
      "runtime.shutdownTimeout soon",
      { runtime: { shutdownTimeout: "soon" } },
      "runtime.shutdownTimeout",
      "soon",
    ],
    ["shutdownGrace soon", { shutdownGrace: "soon" }, "shutdownGrace", "soon"],
    [
      "runtime.shutdownGrace soon",
      { runtime: { shutdownGrace: "soon" } },
      "runtime.shutdownGrace",
      "soon",
    ],
    ["onShutdown not a function", { onShutdown: 1 }, "onShutdown", 1],
    ["health not an object", { health: 1 }, "health", 1],
    ["an unknown health key", { health: { often: 1 } }, "health.often", 1],
    ["health.stall soon", { health: { stall: "soon" } }, "health.stall", "soon"],
    [
      "health.storeFailure soon",
      { health: { storeFailure: "soon" } },
      "health.storeFailure",
      "soon",
    ],
    ["health.background 1", { health: { background: 1 } }, "health.background", 1],
    ["shutdown later", { shutdown: "later" }, "shutdown", "later"],
    ["runtime.shutdown later", { runtime: { shutdown: "later" } }, "shutdown", "later"],
    ["retention soon", { retention: "soon" }, "retention", "soon"],
    ["seed 1.5", { seed: 1.5 }, "seed", 1.5],
    ["owner empty", { owner: "" }, "owner", ""],
    ["breakers a list", { breakers: [] }, "breakers", []],
    ["breakers 1", { breakers: 1 }, "breakers", 1],
    [
      "a breaker name with NUL",
      { breakers: { "b\u0000": { failures: 1, coolDown: 1 } } },
      "breakers",
      "b\u0000",
    ],
    ["a bad breaker policy", { breakers: { p: { failures: 0 } } }, "breakers.p.failures", 0],
    ["maxResultBytes 0", { maxResultBytes: 0 }, "maxResultBytes", 0],
    ["limits 1", { limits: 1 }, "limits", 1],
    [
      "runtime.defaultTimeout soon",
      { runtime: { defaultTimeout: "soon" } },
      "runtime.defaultTimeout",
      "soon",
    ],
    ["an unknown key", { often: 1 }, "often", 1],
    ["lease 0", { lease: 0 }, "lease", 0],
    ["pollInterval 0", { pollInterval: 0 }, "pollInterval", 0],
    ["retention 0", { retention: 0 }, "retention", 0],
    ["a handler that is not there", { handlers: [null] }, "handlers", null],
    [
      "a handler whose name is not a string",
      { handlers: [{ ...report, name: 1 }] },
      "handlers",
      undefined,
    ],
    ["a handler with an empty name", { handlers: [noName] }, "handlers", noName],
  ]

  it.each(bad)(
    "%s is an InvalidOption naming the field and the value",
    (_, given, field, value) => {
      const r = resolve(given as Partial<LayerOptions.LayerOptions>)
      expect(r).toMatchObject({ _tag: "InvalidOption", field })
      if (value !== undefined) expect(r).toHaveProperty("value", value)
      // The message names the field and says what it must be.
      const escaped = field.replace(/[[\].]/g, "\\$&")
      expect((r as { message: string }).message).toMatch(
        new RegExp(`^${escaped} (must|is|needs|has) `),
      )
    },
  )

  it("options that are not an object are an InvalidOption", () => {
    for (const given of [null, 1, "x"]) {
      expect(LayerOptions.resolve(given as never, false)).toMatchObject({
        _tag: "InvalidOption",
        field: "options",
        value: given,
        message: expect.stringMatching(/^options must be an object/),
      })
    }
  })
})
