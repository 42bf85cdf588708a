// browser_render.js URL [KEYS [FILE [EXPR]]] - open URL in headless Chromium (Debian's
// /usr/bin/chromium, or $CHROMIUM) through puppeteer-core, let it render,
// optionally evaluate the JavaScript EXPR in it last (its value is
// printed as "eval": a test's clicks and searches), optionally give FILE to the page's file input (speedscope's "Browse",
// as a user loading a local file would), press KEYS one by one (e.g. "3": speedscope's sandwich view),
// and print one JSON object: the page's visible text, every <title> text
// (an SVG's frames), the root element's attributes, and the page's
// errors (uncaught exceptions and console errors).  Exit 0 when the page
// could be rendered at all.  Run with NODE_PATH at the node_modules that
// holds puppeteer-core.
'use strict';
const puppeteer = require('puppeteer-core');

async function main() {
  const [url, keys = '', file = '', expr = ''] = process.argv.slice(2);
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--allow-file-access-from-files',
           '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const errors = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push('console: ' + m.text());
    });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 30000 });
    await new Promise((r) => setTimeout(r, 1000));
    if (file) {
      const input = await page.$('input[type=file]');
      if (!input) throw new Error('the page has no file input');
      await input.uploadFile(file);
      await new Promise((r) => setTimeout(r, 2000));
    }
    for (const k of keys) {
      await page.keyboard.press(k);
      await new Promise((r) => setTimeout(r, 700));
    }
    const value = expr ? await page.evaluate(expr) : null;
    const out = await page.evaluate(() => {
      const root = document.documentElement;
      const attrs = {};
      for (const a of root.attributes) attrs[a.name] = a.value;
      return {
        text: document.body ? document.body.innerText : root.textContent,
        titles: Array.from(document.getElementsByTagName('title'),
                           (t) => t.textContent),
        attrs,
      };
    });
    out.eval = value;
    out.errors = errors;
    console.log(JSON.stringify(out));
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
