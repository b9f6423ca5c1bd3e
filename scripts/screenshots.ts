// Screenshots of pages at phone and desktop widths, for looking at the UI:
//   npx tsx scripts/screenshots.ts http://localhost:3000 out-dir /path1 /path2 ...
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [base = 'http://localhost:3000', outDir = 'screenshots', ...paths] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
await mkdir(outDir, { recursive: true });
for (const width of [360, 1280]) {
  const page = await browser.newPage({ viewport: { width, height: width < 600 ? 780 : 860 } });
  for (const p of paths.length ? paths : ['/']) {
    await page.goto(base + p, { waitUntil: 'load' });
    const file = path.join(outDir, `${p.replace(/[^a-z0-9]+/gi, '_') || 'home'}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(file);
  }
  await page.close();
}
await browser.close();
