/**
 * Browser check (npm run test:browser): the docs pages in a real browser, Debian's Chromium
 * driven by playwright-core, against a live armgate server with a token.
 *
 * - /docs (Swagger UI, served offline from swagger-ui-dist): authorize with the bare token, run
 *   GET /robot/joint_states from the page, expect 200 and a request that carried
 *   `Authorization: Bearer <token>`;
 * - the same call in a fresh browser context that did not authorize: expect 401;
 * - POST /robot/move/joints executed as Try-it-out pre-fills it (its request example): 200, success true;
 * - /redoc (ReDoc standalone bundle, served offline): renders the API title "armgate";
 * - no page sent a request to any host but this server. Requests the page's
 *   Content-Security-Policy blocked inside the browser never left it: they are listed as notes.
 *
 * Prints `browser: N passed, M failed`; on a failure it saves a screenshot to
 * /tmp/armgate-docs-failure.png and exits 1.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page, type Request } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'browser-check-token';
const SCREENSHOT = '/tmp/armgate-docs-failure.png';
const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The host a request goes to, or undefined for URLs that never touch the network (data:, about:, blob: of a local origin). */
function networkHost(url: string): string | undefined {
  const parsed = new URL(url);
  if (parsed.protocol === 'blob:') return networkHost(url.slice('blob:'.length));
  if (['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(parsed.protocol)) return parsed.hostname;
  return undefined;
}

function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}

/** Every request of every page, to tell afterwards which ones went to another host. */
class RequestLog {
  private readonly requests: Request[] = [];
  private readonly blockedByCsp = new Set<Request>();
  private readonly serverHost: string;

  constructor(serverHost: string) {
    this.serverHost = serverHost;
  }

  watch(page: Page): void {
    page.on('request', (request) => this.requests.push(request));
    page.on('requestfailed', (request) => {
      // Chromium reports a request the page's CSP refused as failed with 'csp' (or ERR_BLOCKED_BY_CSP).
      if (/^csp$|BLOCKED_BY_CSP/i.test(request.failure()?.errorText ?? '')) this.blockedByCsp.add(request);
    });
  }

  private external(): Request[] {
    return this.requests.filter((request) => {
      const host = networkHost(request.url());
      return host !== undefined && host !== this.serverHost && !LOCAL_HOSTS.has(host);
    });
  }

  /** External requests that left (or may have left) the browser. */
  sent(): string[] {
    return this.external()
      .filter((request) => !this.blockedByCsp.has(request))
      .map((request) => request.url());
  }

  /** External requests the page attempted and its CSP stopped inside the browser. */
  blocked(): string[] {
    return [
      ...new Set(
        this.external()
          .filter((request) => this.blockedByCsp.has(request))
          .map((request) => request.url()),
      ),
    ];
  }
}

/**
 * Opens /docs, optionally authorizes with the bare token, and executes an operation from the page as
 * Swagger UI pre-fills it (GET /robot/joint_states by default). Returns the status Swagger UI shows,
 * the response body it shows and the Authorization header it sent.
 */
async function executeFromDocs(
  page: Page,
  url: string,
  authorize: boolean,
  operationId = 'getJointStates',
  path = '/robot/joint_states',
): Promise<{ status: string; body: string; authorization: string | undefined }> {
  await page.goto(`${url}/docs`);
  await page.locator('.swagger-ui .opblock').first().waitFor();
  if (authorize) {
    await page.locator('.swagger-ui button.authorize').click();
    const dialog = page.locator('.swagger-ui .dialog-ux .modal-ux');
    await dialog.locator('input[type=text], input[type=password]').first().fill(TOKEN);
    await dialog.locator('button.modal-btn.auth.authorize').click();
    // Once authorized the dialog offers Logout; then close it.
    await dialog.locator('button.modal-btn.auth', { hasText: 'Logout' }).waitFor();
    await dialog.locator('button.btn-done').click();
    await dialog.waitFor({ state: 'detached' });
  }
  const operation = page.locator(`#operations-robot-${operationId}`);
  await operation.locator('.opblock-summary-control').click();
  await operation.locator('button.try-out__btn').click();
  const sent = page.waitForRequest((request) => new URL(request.url()).pathname === path);
  await operation.locator('button.execute').click();
  const request = await sent;
  const status = operation.locator('.live-responses-table tbody .response-col_status').first();
  await status.waitFor({ timeout: 30_000 });
  const body = operation.locator('.live-responses-table tbody .response-col_description pre').first();
  return {
    status: ((await status.textContent()) ?? '').trim(),
    body: ((await body.textContent().catch(() => '')) ?? '').trim(),
    authorization: await request.headerValue('authorization').then((v) => v ?? undefined),
  };
}

interface Outcome {
  passed: number;
  failed: number;
  screenshot: boolean;
}

async function runChecks(browser: Browser, server: TestServer): Promise<Outcome> {
  const outcome: Outcome = { passed: 0, failed: 0, screenshot: false };
  const log = new RequestLog(new URL(server.url).hostname);
  const pass = (name: string) => {
    outcome.passed++;
    process.stdout.write(`ok - ${name}\n`);
  };
  const fail = (name: string, why: string) => {
    outcome.failed++;
    process.stdout.write(`not ok - ${name}: ${why}\n`);
  };
  /** One check in its own browser context (fresh storage: Swagger UI persists authorization in localStorage). */
  const pageCheck = async (name: string, run: (page: Page) => Promise<void>) => {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    log.watch(page);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(message(e)));
    try {
      await run(page);
      // Let late requests (images, lazy chunks) start, so the request log sees them.
      await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);
      if (errors.length > 0) throw new Error(`uncaught error in the page: ${errors[0]}`);
      pass(name);
    } catch (e) {
      fail(name, message(e));
      if (!outcome.screenshot) {
        outcome.screenshot = await page.screenshot({ path: SCREENSHOT, fullPage: true }).then(
          () => true,
          () => false,
        );
      }
    } finally {
      await page.context().close();
    }
  };

  await pageCheck('/docs: authorize with the bare token, Execute GET /robot/joint_states -> 200', async (page) => {
    const { status, authorization } = await executeFromDocs(page, server.url, true);
    if (status !== '200') throw new Error(`expected status 200 in the page, saw '${status}'`);
    if (authorization !== `Bearer ${TOKEN}`)
      throw new Error(`expected 'Authorization: Bearer ${TOKEN}', the page sent '${authorization ?? '(none)'}'`);
  });
  await pageCheck('/docs: without authorizing, the same Execute -> 401', async (page) => {
    const { status, authorization } = await executeFromDocs(page, server.url, false);
    if (status !== '401') throw new Error(`expected status 401 in the page, saw '${status}'`);
    if (authorization !== undefined)
      throw new Error(`the page sent an Authorization header without authorizing: '${authorization}'`);
  });
  await pageCheck(
    '/docs: Execute POST /robot/move/joints as Try-it-out pre-fills it -> 200, success true',
    async (page) => {
      const { status, body } = await executeFromDocs(page, server.url, true, 'moveToJoints', '/robot/move/joints');
      if (status !== '200') throw new Error(`expected status 200 in the page, saw '${status}': ${body.slice(0, 200)}`);
      if (!/"success":\s*true/.test(body))
        throw new Error(`expected the move to succeed, the page shows: ${body.slice(0, 200)}`);
    },
  );
  await pageCheck("/redoc: renders the API title 'armgate'", async (page) => {
    await page.goto(`${server.url}/redoc`);
    const title = page.locator('.api-info h1, h1').first();
    await title.waitFor();
    const text = ((await title.textContent()) ?? '').trim();
    if (!text.includes('armgate')) throw new Error(`expected the title to name 'armgate', saw '${text}'`);
    if ((await page.locator('[data-section-id]').count()) === 0)
      throw new Error('the title rendered but no operation sections did');
  });

  const name = 'no request to any host but this server';
  const sent = log.sent();
  if (sent.length === 0) pass(name);
  else fail(name, `${sent.length} request(s), e.g. ${sent.slice(0, 3).join(', ')}`);
  for (const url of log.blocked())
    process.stdout.write(`note: the page tried ${url}; its Content-Security-Policy blocked it inside the browser\n`);
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
    const { passed, failed, screenshot } = await runChecks(browser, server);
    process.stdout.write(`browser: ${passed} passed, ${failed} failed\n`);
    if (failed > 0 && screenshot)
      process.stderr.write(`browser check: screenshot of the first failure: ${SCREENSHOT}\n`);
    process.stderr.write(`browser check: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
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
