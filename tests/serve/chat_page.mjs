// Drives vkllm serve's chat page in Debian's chromium, headless, through playwright-core
// (scripts/deps.sh's vkllm_install_serve_deps puts it under build/node-serve; it downloads no
// browser). Prints one JSON line for tests/serve/test_chat_page.py to check: the model's name as
// the page shows it, the question's answer as its DOM text, the request the page sent, and what
// the stop button did to a long answer.
//
//   node chat_page.mjs NODE_PREFIX URL SCREENSHOT QUESTION LONG_QUESTION
import { createRequire } from 'node:module';
import path from 'node:path';

const [prefix, url, screenshot, question, longQuestion] = process.argv.slice(2);
const { chromium } = createRequire(path.join(path.resolve(prefix), 'node_modules', 'x'))(
  'playwright-core');

const out = { console: [], pageErrors: [] };
// Chromium runs as root in CI containers, where its sandbox cannot start and /dev/shm may be
// small.
const browser = await chromium.launch({
  executablePath: process.env.VKLLM_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  timeout: 60000,
});
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  page.setDefaultTimeout(90000);
  page.on('console', (m) => { if (m.type() === 'error') out.console.push(m.text()); });
  page.on('pageerror', (e) => out.pageErrors.push(String(e)));
  // The page samples (OpenAI's default temperature); its requests are made greedy on their
  // way, so that its answer can be compared with the API's. The body it sent is kept.
  const requests = [];
  await page.route('**/v1/chat/completions', async (route) => {
    const body = JSON.parse(route.request().postData());
    requests.push(body);
    await route.continue({ postData: JSON.stringify({ ...body, temperature: 0 }) });
  });
  await page.goto(url, { waitUntil: 'load' });
  // The page fills in the model's name from /v1/models (an ellipsis until then).
  await page.waitForFunction(() => {
    const text = document.querySelector('#model')?.textContent.trim() ?? '';
    return text !== '' && text !== '\u2026';
  });
  out.model = (await page.textContent('#model')).trim();

  const assistants = page.locator('.assistant');
  await page.fill('#input', question);
  await page.click('#send');
  await page.waitForSelector('.assistant[data-done="1"]');
  out.answer = await assistants.last().innerText();
  out.assistantCount = await assistants.count();
  out.request = requests[0] ?? null;
  await page.screenshot({ path: screenshot, fullPage: true });

  // A long answer, stopped once it has begun: it ends (data-done) and grows no more.
  await page.fill('#input', longQuestion);
  await page.click('#send');
  await page.waitForFunction(() => {
    const all = document.querySelectorAll('.assistant');
    return all.length >= 2 && all[all.length - 1].textContent.trim().length > 20;
  });
  const stoppedAt = Date.now();
  await page.click('#stop');
  await page.waitForFunction(
    () => [...document.querySelectorAll('.assistant')].at(-1).dataset.done === '1',
    null, { timeout: 15000 });
  out.stopSeconds = (Date.now() - stoppedAt) / 1000;
  out.stoppedText = await assistants.last().innerText();
  await page.waitForTimeout(2000);
  out.stoppedTextLater = await assistants.last().innerText();
  out.assistantCountAfterStop = await assistants.count();
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
