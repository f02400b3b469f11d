// What every signed-in page shares: the token kept in sessionStorage (never in a URL), a
// call to the public API (a fresh Idempotency-Key on every command, a problem turned into
// an Error with its code), and a wrapper that shows a refusal in the page's #error.
"use strict";
const KEY = "casino-war-token";
const $ = id => document.getElementById(id);

async function call(path, body) {
  const headers = { Authorization: `Bearer ${sessionStorage.getItem(KEY)}` };
  const init = { headers };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    headers["Idempotency-Key"] = crypto.randomUUID();
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) {
    const problem = await response.json();
    throw new Error(`${problem.code}: ${problem.detail}`);
  }
  return response;
}

const api = async (path, body) => (await call(path, body)).json();

function shown(task) {
  return async (...args) => {
    $("error").textContent = "";
    if ($("notice")) $("notice").textContent = "";
    try { await task(...args); } catch (error) { $("error").textContent = error.message; }
  };
}
