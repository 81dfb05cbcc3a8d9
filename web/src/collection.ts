// A collection of the hub's objects, kept by list-then-watch (api.ts's reflect) or listed
// again when asked, and told to whoever draws it. A refusal (403: RBAC gives the user no list
// or watch) is kept to show.
//
// A browser opens at most six HTTP/1.1 connections to one host, and each watch holds one for
// as long as it runs: the dashboard watches five collections and lists the others again
// when something says they changed, so that a connection stays free for its actions.

import { type ApiError, type Handler, type K8sObject, list, reflect, refused } from "./api";

export type Change = "ADDED" | "MODIFIED" | "DELETED" | "LISTED";

export class Collection {
  readonly objects = new Map<string, K8sObject>();
  refusal: ApiError | null = null;
  private listing = false;
  private readonly listeners: ((change: Change, object: K8sObject) => void)[] = [];

  constructor(
    readonly kind: string,
    readonly path: string,
    private readonly query = "",
  ) {}

  /** `listener` hears each object listed or changed; `start` begins the list and watch. */
  listen(listener: (change: Change, object: K8sObject) => void): this {
    this.listeners.push(listener);
    return this;
  }

  /** Lists, then watches, for as long as the page is open. */
  watch(drawn: () => void): void {
    reflect(this.path, this.handler(drawn), this.query);
  }

  /** Lists once more (no more than one list at a time). */
  refresh(drawn: () => void): void {
    if (this.listing || this.refusal) return;
    this.listing = true;
    const handler = this.handler(drawn);
    list(this.path, this.query)
      .then((listed) => handler.replace(listed.items))
      .catch((error) => {
        if (refused(error)) handler.refused(error);
      })
      .finally(() => (this.listing = false));
  }

  private handler(drawn: () => void): Handler {
    const tell = (change: Change, object: K8sObject) => {
      for (const listener of this.listeners) listener(change, object);
      drawn();
    };
    return {
      replace: (items) => {
        const gone = [...this.objects.values()];
        this.objects.clear();
        for (const item of items) this.objects.set(key(item), item);
        for (const item of gone) if (!this.objects.has(key(item))) tell("DELETED", item);
        for (const item of items) tell("LISTED", item);
        drawn();
      },
      change: (type, object) => {
        if (type === "DELETED") this.objects.delete(key(object));
        else this.objects.set(key(object), object);
        tell(type, object);
      },
      refused: (error) => {
        this.refusal = error;
        drawn();
      },
    };
  }

  sorted(): K8sObject[] {
    return [...this.objects.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, o]) => o);
  }
}

export function key(object: K8sObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}
