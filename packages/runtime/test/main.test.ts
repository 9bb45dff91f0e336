/**
 * `Main.runMain` in a real process: a signal interrupts the program, its scope closes, and the
 * exit code says how it ended — 0 after SIGTERM and a clean shutdown, 130 after SIGINT, 1 when
 * the shutdown itself failed. Each test waits for the child's `ready` line (bounded), never for
 * a fixed time, so a slow machine only makes it slower.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Cause, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { Main } from "../src/index.ts"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/main-worker.ts", import.meta.url))

/** Starts the fixture, sends `signal` once it is ready; its exit code and stdout lines. */
const stopWith = (signal: "SIGTERM" | "SIGINT", ...args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly lines: ReadonlyArray<string> }>(
    (resolve, reject) => {
      const p = spawn(
        process.execPath,
        ["--conditions=@tickwork/source", "--import", "tsx", fixture, ...args],
        { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] },
      )
      const lines: Array<string> = []
      // A bound, not a wait: the child normally is ready in about a second.
      const timer = setTimeout(() => {
        p.kill("SIGKILL")
        reject(new Error(`the child was not ready and stopped within 60 s: ${lines.join(" | ")}`))
      }, 60_000)
      // The fixture's own markers; the scheduler's log lines are not this test's subject.
      createInterface({ input: p.stdout }).on("line", (line) => {
        if (line !== "ready" && line !== "closed") return
        lines.push(line)
        if (line === "ready") p.kill(signal)
      })
      p.once("exit", (code) => {
        clearTimeout(timer)
        resolve({ code, lines })
      })
    },
  )

describe("Main.runMain in a process", () => {
  it("exits 0 after SIGTERM and a clean shutdown", async () => {
    const { code, lines } = await stopWith("SIGTERM")
    expect(lines).toEqual(["ready", "closed"])
    expect(code).toBe(0)
  }, 90_000)

  it("exits 130 after SIGINT, as a shell expects of Ctrl-C", async () => {
    const { code, lines } = await stopWith("SIGINT")
    expect(lines).toEqual(["ready", "closed"])
    expect(code).toBe(130)
  }, 90_000)

  it("exits 1 after SIGTERM when the shutdown itself fails", async () => {
    const { code, lines } = await stopWith("SIGTERM", "fail-on-close")
    expect(lines).toEqual(["ready"])
    expect(code).toBe(1)
  }, 90_000)
})

describe("Main.exitCode", () => {
  const interrupted = Exit.failCause(Cause.interrupt(1))
  it("maps interruptions after SIGTERM to 0 and leaves every other code alone", () => {
    expect(Main.exitCode(interrupted, 130, "SIGTERM")).toBe(0)
    expect(Main.exitCode(interrupted, 130, "SIGINT")).toBe(130)
    expect(Main.exitCode(interrupted, 130, undefined)).toBe(130)
    expect(Main.exitCode(Exit.fail("boom"), 1, "SIGTERM")).toBe(1)
    expect(Main.exitCode(Exit.succeed(undefined), 0, "SIGTERM")).toBe(0)
  })
})
