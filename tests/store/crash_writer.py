"""The writer test_crash.py kills: writes forever, printing each write once it returned.

    python crash_writer.py STORE_FILE PREFIX

Each line is an acknowledgement: `C name rv` for a created ConfigMap, `U name value rv`
for an update of the PREFIX-counter ConfigMap's data.value.
"""

from __future__ import annotations

import sys

from fleetwarden.store import SqliteStore

PAYLOAD = "x" * 512


def configmap(name: str, value: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "crash"},
        "data": {"value": value, "payload": PAYLOAD},
    }


def main(path: str, prefix: str) -> None:
    store = SqliteStore(path)
    counter = f"{prefix}-counter"
    store.create(configmap(counter, "none yet"))
    i = 0
    while True:
        name = f"{prefix}-{i:06d}"
        created = store.create(configmap(name, str(i)))
        print("C", name, created["metadata"]["resourceVersion"], flush=True)
        if i % 5 == 0:
            updated = store.update(configmap(counter, str(i)))
            print("U", counter, i, updated["metadata"]["resourceVersion"], flush=True)
        i += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
