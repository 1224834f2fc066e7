#!/usr/bin/env node
// The npm launcher: finds Python >= 3.11, makes a virtualenv once per version, installs the wheel
// this package carries into it, and runs the `benchwarmers` CLI there with the arguments given.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const PACKAGE = require("../package.json");
const WHEELS = path.join(__dirname, "..", "wheels");
const CANDIDATES = ["python3.13", "python3.12", "python3.11", "python3", "python"];
const WINDOWS = process.platform === "win32";

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

function findPython() {
  const chosen = process.env.BENCHWARMERS_PYTHON;
  for (const candidate of chosen ? [chosen] : CANDIDATES) {
    const probe = spawnSync(candidate, ["-c", "import sys; print(int(sys.version_info >= (3, 11)))"], {
      encoding: "utf8",
    });
    if (probe.status === 0 && probe.stdout.trim() === "1") return candidate;
    if (chosen) fail(`BENCHWARMERS_PYTHON=${chosen} is not Python 3.11 or newer`);
  }
  fail("Benchwarmers needs Python 3.11 or newer: install it, or set BENCHWARMERS_PYTHON to its path");
}

function venvFolder() {
  if (process.env.BENCHWARMERS_NPM_VENV) return process.env.BENCHWARMERS_NPM_VENV;
  return path.join(os.homedir(), ".benchwarmers", "npm", `venv-${PACKAGE.version}`);
}

function run(command, args, what) {
  const done = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  if (done.status !== 0) fail(`${what} failed (${command} ${args.join(" ")})`);
}

function ensureVenv(folder) {
  const bin = path.join(folder, WINDOWS ? "Scripts" : "bin");
  const cli = path.join(bin, WINDOWS ? "benchwarmers.exe" : "benchwarmers");
  const stamp = path.join(folder, ".benchwarmers-npm");
  if (fs.existsSync(cli) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === PACKAGE.version) return cli;
  const wheels = fs.existsSync(WHEELS) ? fs.readdirSync(WHEELS).filter((name) => name.endsWith(".whl")) : [];
  if (wheels.length !== 1) fail(`this package should carry one wheel in ${WHEELS}; found ${wheels.length}`);
  process.stderr.write(`benchwarmers: installing ${wheels[0]} into ${folder} (once)\n`);
  run(findPython(), ["-m", "venv", "--clear", folder], "making the virtualenv");
  const python = path.join(bin, WINDOWS ? "python.exe" : "python");
  run(python, ["-m", "pip", "install", "--quiet", path.join(WHEELS, wheels[0])], "installing the wheel");
  fs.writeFileSync(stamp, PACKAGE.version);
  return cli;
}

const cli = ensureVenv(venvFolder());
const child = spawnSync(cli, process.argv.slice(2), { stdio: "inherit" });
if (child.error) fail(`could not run ${cli}: ${child.error.message}`);
process.exit(child.status === null ? 1 : child.status);
