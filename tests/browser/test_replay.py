"""The agent sessions list and the replay on a canvas, in a real Chromium against a real stack.

- A session recorded by real API calls (reads with a `Lorebase-Session` header and a note) is listed,
  replayed: the canvas is not blank and its pixels change between steps; paused on a step, the side
  panel shows the touched Records as of the step's Revision.
- `?step=N` opens the replay on step N.
- A synthetic 2,000-step / 5,000-Record session, served by Playwright's route interception of
  `GET /api/v1/sessions/{session}` (real calls would take minutes), is played at 60 steps per second
  while a `requestAnimationFrame` counter measures the frames per second: printed, never asserted.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Route

from tests.browser.conftest import WebStack, sign_in

CANVAS = "[data-testid=replay-canvas]"
FPS_WINDOW_MS = 3000

# How many pixels of the canvas are not the white background (a blank canvas has none).
INKED_PIXELS = """() => {
  const canvas = document.querySelector('[data-testid=replay-canvas]');
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i] < 250 || data[i + 1] < 250 || data[i + 2] < 250) inked += 1;
  }
  return inked;
}"""
CANVAS_IMAGE = "() => document.querySelector('[data-testid=replay-canvas]').toDataURL()"


@pytest.fixture(scope="module")
def recorded(web_stack: WebStack) -> Iterator[str]:
    """A session of usr_web's, recorded by real calls: four reads and a note."""
    session = f"web-replay-{uuid.uuid4().hex[:8]}"
    trace = {"Lorebase-Session": session}
    base = "/api/v1/domains/supply"
    auth = {"Authorization": f"Bearer {web_stack.web_key}"}
    with httpx.Client(base_url=web_stack.url, timeout=30, trust_env=False, headers=auth) as http:
        calls = [
            http.get(f"{base}/kinds/Supplier/records/S-1001", headers=trace),
            http.post(f"{base}/context", json={"refs": ["Supplier/S-1001"], "depth": 1}, headers=trace),
            http.post(f"{base}/search", json={"text": "seal", "limit": 5}, headers=trace),
            http.post(f"{base}/query", json={"kind": "Part", "limit": 5}, headers=trace),
        ]
        for response in calls:
            assert response.status_code == 200, response.text
        note = http.post(f"/api/v1/sessions/{session}/notes", json={"text": "found the supplier's parts"})
        assert note.status_code == 201, note.text
        # Read back without the session header: a call that names the session becomes a step of it.
        answer = http.get(f"/api/v1/sessions/{session}")
        assert answer.status_code == 200, answer.text
        assert answer.json()["steps"] == 4
    yield session


def wait_drawn(page: Page, step: int) -> None:
    """Until the canvas shows `step` (0-based) with its layout done, and two frames have passed."""
    page.wait_for_function(
        "(step) => { const c = document.querySelector('[data-testid=replay-canvas]');"
        " return c && c.dataset.step === String(step) && c.dataset.layout === 'done'; }",
        arg=step,
    )
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def test_real_session_replayed(
    page: Page, web_stack: WebStack, recorded: str, snap: Callable[[str], None]
) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/sessions")
    link = page.get_by_role("link", name=recorded)
    link.wait_for()
    row = page.locator("tr", has=link)
    assert "usr_web" in row.inner_text()
    snap("sessions")
    link.click()

    page.get_by_test_id("step-counter").wait_for()
    assert page.get_by_test_id("step-counter").inner_text().replace(" ", "") == "1/4"
    wait_drawn(page, 0)
    first_inked = page.evaluate(INKED_PIXELS)
    first = page.evaluate(CANVAS_IMAGE)
    assert first_inked > 0, "the canvas is blank on step 1"
    assert page.get_by_test_id("step-call").inner_text()  # the call of step 1 (GetRecord)
    # Paused: step 1's Record as of its Revision (the title comes from GET ...?at=<revision>).
    records = page.get_by_test_id("step-records")
    records.get_by_text("Kavsen Alloys").first.wait_for()

    page.get_by_role("button", name="Step forward").click()
    wait_drawn(page, 1)
    page.wait_for_function(f"(before) => ({CANVAS_IMAGE})() !== before", arg=first)
    second_inked = page.evaluate(INKED_PIXELS)
    assert second_inked > 0
    assert page.evaluate(CANVAS_IMAGE) != first, "the canvas did not change between steps 1 and 2"
    # The context pack touched the Supplier's neighbours: more on the canvas than on step 1.
    assert second_inked > first_inked
    page.wait_for_function("() => new URLSearchParams(location.search).get('step') === '2'")
    records.get_by_text("Kavsen Alloys").first.wait_for()
    snap("replay")
    # The note follows the last step (the query) and shows beside it.
    page.goto(f"{web_stack.url}/app/sessions/{recorded}?step=4")
    page.get_by_test_id("step-notes").get_by_text("found the supplier's parts").wait_for()
    print(f"replay of {recorded}: canvas inked pixels step 1 {first_inked}, step 2 {second_inked}")


def test_permalink_opens_the_step(page: Page, web_stack: WebStack, recorded: str) -> None:
    sign_in(page, web_stack, web_stack.web_key)
    page.goto(f"{web_stack.url}/app/sessions/{recorded}?step=3")
    counter = page.get_by_test_id("step-counter")
    counter.wait_for()
    assert counter.inner_text().replace(" ", "") == "3/4"
    assert page.get_by_test_id("step-panel").get_attribute("data-step") == "2"
    wait_drawn(page, 2)
    assert page.evaluate(INKED_PIXELS) > 0
    # The keyboard steps too.
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => new URLSearchParams(location.search).get('step') === '4'")
    # Out of range: the last step.
    page.goto(f"{web_stack.url}/app/sessions/{recorded}?step=99")
    page.get_by_test_id("step-counter").wait_for()
    assert page.get_by_test_id("step-counter").inner_text().replace(" ", "") == "4/4"


KINDS = ["Supplier", "Part", "Contract", "Plant", "RiskFlag", "Shipment"]


def synthetic_session(session: str, steps: int, records: int) -> dict[str, Any]:
    """The shape of web/src/replay/synthetic.ts: every Record touched once in order, a few again,
    Links between the Records of a step, a note every 100 steps, no Revision (no as-of reads)."""
    entries: list[dict[str, Any]] = []
    for s in range(steps):
        base, upto = s * records // steps, (s + 1) * records // steps
        touched = [f"{KINDS[i % len(KINDS)]}/R-{i}" for i in range(base, max(upto, base + 1))]
        touched += (
            [f"{KINDS[j % len(KINDS)]}/R-{j}" for j in ((base * 7 + 3) % base, (base * 13 + 5) % base)]
            if base
            else []
        )
        links = [
            {"relation": "related", "from": a, "to": b} for a, b in zip(touched, touched[1:], strict=False)
        ]
        entries.append(
            {
                "kind": "step",
                "id": len(entries) + 1,
                "at": "2026-10-01T08:00:00Z",
                "principal": "agt_synthetic",
                "domain": "supply",
                "call": ("Context", "Query", "GetRecord")[s % 3],
                "status": 404 if s % 50 == 49 else 200,
                "latency_ms": 2.0 + s % 17,
                "counts": {"touched": len(touched)},
                "request": {"domain": "supply"},
                "touched": touched,
                "touched_links": links,
            }
        )
        if s % 100 == 0:
            entries.append(
                {
                    "kind": "note",
                    "id": len(entries) + 1,
                    "at": "2026-10-01T08:00:00Z",
                    "principal": "agt_synthetic",
                    "text": f"note {s}",
                }
            )
    return {"session": session, "entries": entries, "steps": steps}


MEASURE_FPS = """async (windowMs) => {
  const canvas = document.querySelector('[data-testid=replay-canvas]');
  const drawsBefore = Number(canvas.dataset.draws || 0);
  const stepBefore = Number(canvas.dataset.step);
  let frames = 0;
  let worst = 0;
  const start = performance.now();
  let last = start;
  await new Promise((done) => {
    const frame = (now) => {
      frames += 1;
      worst = Math.max(worst, now - last);
      last = now;
      if (now - start < windowMs) requestAnimationFrame(frame); else done();
    };
    requestAnimationFrame(frame);
  });
  const seconds = (performance.now() - start) / 1000;
  return {
    fps: frames / seconds,
    drawsPerSecond: (Number(canvas.dataset.draws) - drawsBefore) / seconds,
    steps: Number(canvas.dataset.step) - stepBefore,
    worstFrameMs: worst,
    drawMs: Number(canvas.dataset.drawMs),
  };
}"""


def test_synthetic_big_session_fps(page: Page, web_stack: WebStack, snap: Callable[[str], None]) -> None:
    session = "synthetic-2000"
    body = json.dumps(synthetic_session(session, 2000, 5000))

    def serve(route: Route) -> None:
        route.fulfill(status=200, content_type="application/json", body=body)

    page.route(f"**/api/v1/sessions/{session}", serve)
    sign_in(page, web_stack, web_stack.web_key)
    started = time.monotonic()
    # From step 1700 on, 4,250 to 4,750 of the 5,000 Records are on the canvas: the heaviest frames.
    page.goto(f"{web_stack.url}/app/sessions/{session}?step=1700")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=replay-canvas]')?.dataset.layout === 'done'",
        timeout=90_000,
    )
    layout_s = time.monotonic() - started
    assert page.get_by_test_id("step-counter").inner_text().replace(" ", "") == "1700/2000"

    page.get_by_label("Speed").select_option("60")
    page.get_by_role("button", name="Play").click()
    result = page.evaluate(MEASURE_FPS, FPS_WINDOW_MS)
    # Paused in the page's own turn: it may reach the last step and stop by itself at any moment, so
    # a look for the Pause button and a click on it later can miss each other.
    page.evaluate("() => document.querySelector('button[aria-label=\"Pause\"]')?.click()")
    page.get_by_role("button", name="Play").wait_for()
    snap("replay-big")
    print(
        f"replay of 2,000 steps / 5,000 Records: layout and first frames {layout_s:.1f} s; while playing at "
        f"60 steps/s: {result['fps']:.1f} frames/s (requestAnimationFrame), {result['drawsPerSecond']:.1f} "
        f"canvas redraws/s, {result['steps']} steps in {FPS_WINDOW_MS} ms, worst frame {result['worstFrameMs']:.0f} ms, "
        f"mean draw (JS) {result['drawMs']:.2f} ms"
    )
    assert result["steps"] > 0, "the replay did not move while playing"
    assert result["drawsPerSecond"] > 0
