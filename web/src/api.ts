// The Kubernetes API of the hub that served the page, with the signed-in user's credentials:
// a bearer token kept in this tab's sessionStorage, or none, and the browser's client
// certificate goes with every request over TLS. The page never has more rights than RBAC
// gives that user; every refusal is the API's own Status message.

const SESSION = "fleetwarden.session";
const CERTIFICATE = "certificate"; // the session's value when the browser's certificate signs in

export type K8sObject = {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // The fields the dashboard reads are declared where it reads them.
  [field: string]: unknown;
};

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const session = {
  token(): string | null {
    const value = sessionStorage.getItem(SESSION);
    return value === CERTIFICATE ? null : value;
  },
  active(): boolean {
    return sessionStorage.getItem(SESSION) !== null;
  },
  signIn(token: string | null): void {
    sessionStorage.setItem(SESSION, token ?? CERTIFICATE);
  },
  signOut(): void {
    sessionStorage.removeItem(SESSION);
  },
};

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = session.token();
  return { Accept: "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}), ...extra };
}

async function failure(response: Response): Promise<ApiError> {
  const status = await response.json().catch(() => null);
  return new ApiError(response.status, status?.message ?? `${response.status} ${response.statusText}`);
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { "Content-Type": contentType }),
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** Who the API takes the user for (SelfSubjectReview, as `kubectl auth whoami`). */
export async function whoami(): Promise<string> {
  const review = await request<{ status: { userInfo: { username: string } } }>(
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  );
  return review.status.userInfo.username;
}

export interface Handler {
  /** The whole collection, after each list. */
  replace(items: K8sObject[]): void;
  /** One change the watch brought. */
  change(type: "ADDED" | "MODIFIED" | "DELETED", object: K8sObject): void;
  /** The collection cannot be read (403, 404...): shown, and not asked again. */
  refused(error: ApiError): void;
}

type List = { items: K8sObject[]; metadata: { resourceVersion: string } };

export function list(path: string, query = ""): Promise<List> {
  return request<List>("GET", `${path}?${query}`);
}

/** A collection kept in step by list-then-watch, as client-go's reflector does: the watch
 * resumes from the last resourceVersion seen, a list starts over after 410 Gone or a
 * failure (a second later). `query` narrows both, as `fieldSelector=...`. */
export function reflect(path: string, handler: Handler, query = ""): void {
  const sep = query ? "&" : "";
  const run = async () => {
    for (;;) {
      try {
        const listed = await list(path, query);
        handler.replace(listed.items);
        let version = listed.metadata.resourceVersion;
        for (;;) version = await watch(`${path}?${query}${sep}`, version, handler);
      } catch (error) {
        if (refused(error)) {
          handler.refused(error);
          return;
        }
        await new Promise((resume) => setTimeout(resume, 1000));
      }
    }
  };
  void run();
}

/** An answer that asking again will not change (403, 404...), unlike 410 Gone or a 5xx. */
export function refused(error: unknown): error is ApiError {
  return error instanceof ApiError && error.code !== 410 && error.code < 500;
}

/** One watch stream, to its end; the last resourceVersion it brought. */
async function watch(prefix: string, version: string, handler: Handler): Promise<string> {
  const response = await fetch(
    `${prefix}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(version)}`,
    { headers: headers(), cache: "no-store" },
  );
  if (!response.ok || !response.body) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return version;
    buffered += value;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      const event = JSON.parse(line) as { type: string; object: K8sObject & { code?: number; message?: string } };
      if (event.type === "ERROR") throw new ApiError(event.object.code ?? 500, event.object.message ?? "");
      version = event.object.metadata.resourceVersion ?? version;
      if (event.type !== "BOOKMARK") handler.change(event.type as "ADDED", event.object);
    }
  }
}
