// A small typed client over the types openapi-typescript generates from the document:
// tests/api/test_generated_clients.py type-checks it with tsc --strict.
import type { paths, components } from "./api";

type Hand = components["schemas"]["HandView"];
type Problem = components["schemas"]["ProblemDetails"];
type PlaceHand = paths["/v1/hands"]["post"];
type PlaceBody = PlaceHand["requestBody"]["content"]["application/json"];
type Placed = PlaceHand["responses"]["201"]["content"]["application/json"];
type Refused = PlaceHand["responses"]["422"]["content"]["application/problem+json"];

declare function fetch(url: string, init?: object): Promise<{ status: number; json(): Promise<unknown> }>;

export async function placeHand(base: string, token: string, body: PlaceBody): Promise<Hand | string> {
  const response = await fetch(`${base}/v1/hands`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Idempotency-Key": "k", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status === 201) {
    const hand = (await response.json()) as Placed;
    const decided: string | null | undefined = hand.decided_by;
    return decided ?? hand;
  }
  const problem = (await response.json()) as Refused;
  const code: string = problem.code;
  const typed: Problem = problem;
  return `${code}: ${typed.detail}`;
}
