/**
 * The root command: subcommands, help, version, and the package's bin entry.
 */

import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Cli } from "../src/index.ts"
import { tickwork } from "./support.ts"

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  readonly version: string
  readonly bin: Record<string, string>
}

describe("tickwork", () => {
  it.effect("without a subcommand prints help listing every subcommand, and exits 0", () =>
    Effect.gen(function* () {
      const out = yield* tickwork()
      expect(out.code).toBe(0)
      expect(out.stdout).toContain("USAGE\n  tickwork <subcommand> [flags]")
      expect(out.stdout).toMatch(/SUBCOMMANDS\n {2}explain +List the next slots/)
      for (const name of ["tasks", "status", "ledger", "pause", "resume", "cancel", "stats"]) {
        expect(out.stdout).toMatch(new RegExp(`\\n {2}${name} +[A-Z]`))
      }
    }),
  )

  it.effect("an unknown subcommand is an error, exit code 1", () =>
    Effect.gen(function* () {
      const out = yield* tickwork("jobs")
      expect(out.code).toBe(1)
      expect(out.stderr).toContain('Unknown subcommand "jobs" for "tickwork"')
    }),
  )

  it.effect("--version prints the package's version", () =>
    Effect.gen(function* () {
      expect(Cli.version).toBe(pkg.version)
      const out = yield* tickwork("--version")
      expect(out.code).toBe(0)
      expect(out.stdout).toBe(`tickwork v${pkg.version}`)
    }),
  )

  it("the bin is named tickwork, exists before a build, and runs what src/bin.ts compiles to", () => {
    expect(Object.keys(pkg.bin)).toEqual(["tickwork"])
    expect(pkg.bin.tickwork).toBe("./bin/tickwork.js")
    const launcher = readFileSync(new URL("../bin/tickwork.js", import.meta.url), "utf8")
    expect(launcher.startsWith("#!/usr/bin/env node\n")).toBe(true)
    expect(launcher).toContain('import "../dist/src/bin.js"')
    const source = new URL("../src/bin.ts", import.meta.url)
    expect(existsSync(source)).toBe(true)
    expect(readFileSync(source, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true)
  })
})
