/**
 * Browser check of the live page at / (issue 14): Debian's Chromium driven by playwright-core,
 * WebGL through SwiftShader, against a live armgate server with a token.
 *
 * - the page loads with no script error and no request to any host but this server;
 * - the token is typed once, kept in sessionStorage, and never appears in a URL;
 * - the joint values (`data-joint="jointN"`, `data-rad`) follow a move made through the API
 *   within 0.01 rad;
 * - the 3D canvas is not blank;
 * - a named position button, pressed from the keyboard, starts a motion;
 * - the Stop button (`data-action="stop"`) stops a running move, and stays in view on a tablet;
 * - screenshots go to artifacts/live-page.png and live-page-tablet.png (ARMGATE_ARTIFACTS overrides the folder).
 *
 * Prints `browser (live page): N passed, M failed`; exits 1 on a failure.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../lib/settings/resolve.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'live-page-check-token';
const ARTIFACTS = process.env.ARMGATE_ARTIFACTS ?? path.join(PROJECT_ROOT, 'artifacts');
const SCREENSHOT = path.join(ARTIFACTS, 'live-page.png');
const LAUNCH_ARGS = [
  '--no-sandbox',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const TARGET = [0.6, 0.35, -0.2, -1.2, 0.3, 1.1, 0.4];
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}

/** The host a URL goes to over the network, or undefined (data:, blob: of this origin, about:). */
function networkHost(url: string): string | undefined {
  const parsed = new URL(url);
  if (parsed.protocol === 'blob:') return networkHost(url.slice('blob:'.length));
  if (['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(parsed.protocol)) return parsed.hostname;
  return undefined;
}

async function api(server: TestServer, route: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}${route}`, {
    method: body === undefined && route !== '/stop' ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/** The seven data-rad values the page shows. */
function pageJoints(page: Page): Promise<number[]> {
  return page.evaluate(() =>
    [1, 2, 3, 4, 5, 6, 7].map((n) =>
      Number(document.querySelector(`[data-joint="joint${n}"]`)?.getAttribute('data-rad')),
    ),
  );
}

/** Waits until the page's joints are within `tol` rad of `target`; returns the largest difference seen last. */
async function waitJoints(page: Page, target: readonly number[], tol: number, timeoutMs: number): Promise<number> {
  const until = performance.now() + timeoutMs;
  let worst = Number.POSITIVE_INFINITY;
  while (performance.now() < until) {
    const q = await pageJoints(page);
    worst = Math.max(...q.map((v, i) => Math.abs(v - (target[i] ?? 0))));
    if (worst <= tol) return worst;
    await page.waitForTimeout(50);
  }
  throw new Error(`the page's joints stayed ${worst.toFixed(4)} rad from the target (tolerance ${tol})`);
}

/** Fraction of the canvas's pixels that differ from its background colour (read from the drawing buffer). */
function canvasCoverage(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const canvas = document.querySelector('.canvas-host canvas') as HTMLCanvasElement | null;
    if (!canvas) return 0;
    const image = new Image();
    image.src = canvas.toDataURL('image/png');
    await image.decode();
    const flat = document.createElement('canvas');
    flat.width = canvas.width;
    flat.height = canvas.height;
    const g = flat.getContext('2d');
    if (!g) return 0;
    g.drawImage(image, 0, 0);
    const { data } = g.getImageData(0, 0, flat.width, flat.height);
    // The scene's background is #e9eef3; the arm is orange.
    let differ = 0;
    let orange = 0;
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i] ?? 0;
      const gg = data[i + 1] ?? 0;
      const b = data[i + 2] ?? 0;
      if (Math.abs(r - 0xe9) + Math.abs(gg - 0xee) + Math.abs(b - 0xf3) > 24) differ++;
      if (r > 150 && r - b > 60) orange++;
    }
    const pixels = data.length / 4;
    return Math.min(differ / pixels, orange > 200 ? 1 : 0);
  });
}

interface Outcome {
  passed: number;
  failed: number;
}

async function runChecks(browser: Browser, server: TestServer): Promise<Outcome> {
  const outcome: Outcome = { passed: 0, failed: 0 };
  const serverHost = new URL(server.url).hostname;
  const check = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
      outcome.passed++;
      process.stdout.write(`ok - ${name}\n`);
    } catch (e) {
      outcome.failed++;
      process.stdout.write(`not ok - ${name}: ${message(e)}\n`);
    }
  };

  const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const urls: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  page.on('pageerror', (e) => errors.push(message(e)));
  page.on('console', (m) => {
    // The first data request without a token is a 401 (that is how the page knows to ask for it): Chromium logs it.
    if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(`console: ${m.text()}`);
  });

  await check('the page loads, asks for the token once, and goes live', async () => {
    await page.goto(`${server.url}/`);
    await page.locator('form.token input').waitFor({ state: 'visible' });
    await page.locator('form.token input').fill(TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('[data-connection="live"]').waitFor();
    const stored = await page.evaluate(() => sessionStorage.getItem('armgate.token'));
    if (stored !== TOKEN) throw new Error(`sessionStorage holds '${stored}'`);
    await page.reload();
    await page.locator('[data-connection="live"]').waitFor();
    if (await page.locator('form.token').isVisible()) throw new Error('the token was asked for again after a reload');
  });

  await check('named positions are buttons', async () => {
    await page.locator('[data-position="home"]').waitFor();
    const names = await page.locator('[data-position]').evaluateAll((els) => els.map((e) => e.textContent));
    for (const name of ['home', 'work', 'transport'])
      if (!names.includes(name)) throw new Error(`no button for ${name}: ${names.join(', ')}`);
  });

  await check('the joint values follow a move made through the API within 0.01 rad', async () => {
    const moved = await api(server, '/robot/move/joints', { joints: TARGET, speed: 0.6 });
    if (moved.status !== 200 || !(moved.body as { success: boolean }).success)
      throw new Error(`the move failed: ${JSON.stringify(moved.body)}`);
    await waitJoints(page, TARGET, 0.01, 5000);
    const state = await page.locator('[data-motion-state]').getAttribute('data-motion-state');
    if (state !== 'finished') throw new Error(`the motion panel says '${state}'`);
  });

  await check('the 3D canvas is not blank', async () => {
    await page.waitForTimeout(300);
    const coverage = await canvasCoverage(page);
    if (coverage < 0.01)
      throw new Error(`only ${(coverage * 100).toFixed(2)} % of the canvas is drawn (no arm in orange?)`);
  });

  await check('a named position button works from the keyboard', async () => {
    const button = page.locator('[data-position="work"]');
    await button.focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-motion-state="started"]').waitFor();
    await waitJoints(page, WORK, 0.01, 15_000);
    await page.locator('[data-motion-state="finished"]').waitFor();
  });

  await check('the Stop button stops a running move', async () => {
    const moving = api(server, '/robot/move/joints', { joints: TARGET, speed: 0.1 });
    await page.locator('[data-motion-state="started"]').waitFor();
    await page.waitForTimeout(300);
    await page.locator('[data-action="stop"]').click();
    const answer = await moving;
    const body = answer.body as { success: boolean; message: string };
    if (body.success !== false) throw new Error(`the move was not stopped: ${JSON.stringify(body)}`);
    await page.locator('[data-motion-state="stopped"]').waitFor();
    const q = await pageJoints(page);
    const far = Math.max(...q.map((v, i) => Math.abs(v - (TARGET[i] ?? 0))));
    if (far < 0.05) throw new Error('the arm reached the target: the stop came too late to tell');
  });

  await check('a screenshot is written', async () => {
    await api(server, '/robot/move/joints', { joints: [0.5, 0.4, 0, -1.3, 0, 1.2, 0], speed: 0.8 });
    await page.waitForTimeout(500);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
  });

  await check('on a tablet in portrait the Stop button stays in view', async () => {
    await page.setViewportSize({ width: 820, height: 1180 });
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.waitForTimeout(200);
    await page.screenshot({ path: path.join(ARTIFACTS, 'live-page-tablet.png') });
    const box = await page.locator('[data-action="stop"]').boundingBox();
    if (!box || box.y < 0 || box.y + box.height > 1180 || box.height < 44)
      throw new Error(`the stop button is at ${JSON.stringify(box)}`);
  });

  await check('no script error, no request off this machine, no token in any URL', async () => {
    if (errors.length > 0) throw new Error(`errors in the page: ${errors.slice(0, 3).join(' | ')}`);
    const external = urls.filter((url) => {
      const host = networkHost(url);
      return host !== undefined && host !== serverHost && !LOCAL_HOSTS.has(host);
    });
    if (external.length > 0) throw new Error(`requests off the machine: ${external.slice(0, 3).join(', ')}`);
    const leaked = urls.filter((url) => url.includes(TOKEN));
    if (leaked.length > 0) throw new Error(`the token is in a URL: ${leaked[0]}`);
  });

  await context.close();
  return outcome;
}

async function main(): Promise<number> {
  if (!existsSync(CHROMIUM)) {
    process.stderr.write(
      `browser check: ${CHROMIUM} is missing. Install Debian's Chromium as root:\n  apt-get update && apt-get install -y chromium\n`,
    );
    return 1;
  }
  const started = performance.now();
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startTestServer({ web: { token: TOKEN } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
    const { passed, failed } = await runChecks(browser, server);
    process.stdout.write(`browser (live page): ${passed} passed, ${failed} failed\n`);
    if (existsSync(SCREENSHOT)) process.stderr.write(`browser check: screenshot of the live page: ${SCREENSHOT}\n`);
    process.stderr.write(`browser check (live page): ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return failed === 0 ? 0 : 1;
  } finally {
    await browser
      ?.close()
      .catch((e: unknown) => process.stderr.write(`browser check: closing the browser: ${message(e)}\n`));
    await server?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`browser check failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
