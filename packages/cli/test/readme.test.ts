/**
 * The README's `console` samples are real: each block's `$ tickwork …` line is run in-process
 * and what it prints (stdout, then stderr) must be the rest of the block. A sample naming
 * `--store tasks.db` runs against a fresh store seeded with a known history (test/store.ts) in
 * virtual time; its path is shown as `tasks.db`.
 */

import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { seed, sqlite, tempStore } from "./store.ts"
import { tickwork } from "./support.ts"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

/** Splits a command line into words; double quotes group words, as in a shell. */
const words = (line: string): Array<string> =>
  [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? "")

const samples = [...readme.matchAll(/^```console\n\$ (.*)\n([\s\S]*?)^```$/gm)].map((m) => ({
  command: m[1] ?? "",
  expected: (m[2] ?? "").trimEnd(),
}))

describe("README samples", () => {
  it("has samples of the DST notes, --json and an error", () => {
    const all = samples.map((s) => s.command).join("\n")
    expect(samples.length).toBeGreaterThanOrEqual(4)
    expect(all).toContain("--json")
    expect(samples.map((s) => s.expected).join("\n")).toContain("ERROR")
    for (const command of ["tasks", "status", "ledger", "pause", "resume", "stats"]) {
      expect(all).toContain(`tickwork ${command} `)
    }
  })

  it.effect.each(samples)("$command", ({ command, expected }) =>
    Effect.gen(function* () {
      const [program, ...args] = words(command)
      expect(program).toBe("tickwork")
      if (!args.includes("tasks.db")) {
        const out = yield* tickwork(...args)
        expect(`${out.stdout}${out.stderr}`.trim()).toBe(expected)
        return
      }
      const store = tempStore()
      yield* seed(sqlite(store.file), { run: true })
      const out = yield* tickwork(...args.map((a) => (a === "tasks.db" ? store.file : a)))
      store.cleanup()
      expect(`${out.stdout}${out.stderr}`.replaceAll(store.file, "tasks.db").trim()).toBe(expected)
    }),
  )
})
