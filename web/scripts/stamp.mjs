// After `vite build`: puts the licences of the libraries bundled beside the bundle (they
// ship inside it), then records a digest of the sources it was built from and of each
// file built, so a test (without Node) can tell when one was changed without the other:
// tests/dashboard/test_assets.py computes the same digests.
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

const WEB = join(import.meta.dirname, "..");
const OUT = join(WEB, "..", "src", "fleetwarden", "dashboard", "assets");
const SOURCES = ["package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "scripts", "src"];
const STAMP = "build.json";

function files(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

function sha256(data) {
  return createHash("sha256").update(data).digest("hex");
}

/** sha256 of "<path>\n<sha256 of its bytes>\n" for each file, in the order of their paths. */
function digest(root, paths) {
  const lines = paths
    .flatMap((p) => files(join(root, p)))
    .map((f) => relative(root, f).split(sep).join("/"))
    .sort()
    .map((rel) => `${rel}\n${sha256(readFileSync(join(root, rel)))}\n`);
  return sha256(lines.join(""));
}

for (const library of ["echarts", "zrender"]) {
  for (const notice of ["LICENSE", "NOTICE"]) {
    const from = join(WEB, "node_modules", library, notice);
    if (statSync(from, { throwIfNoEntry: false })) {
      copyFileSync(from, join(OUT, `${library}.${notice}.txt`));
    }
  }
}

const built = readdirSync(OUT).filter((name) => name !== STAMP).sort();
const stamp = {
  sources: digest(WEB, SOURCES),
  files: Object.fromEntries(built.map((name) => [name, sha256(readFileSync(join(OUT, name)))])),
};
writeFileSync(join(OUT, STAMP), JSON.stringify(stamp, null, 2) + "\n");
console.log(`stamped ${built.join(", ")} built from sources ${stamp.sources}`);
