// A real browser for page tests: Debian's Chromium driven by playwright-core (one per test file).
// Every page a test opens records what it asked for and any script that ran from an injected
// text, so that tests can assert that a page made no third-party request and executed nothing.
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
/**
 * Screenshots of each page state are taken on every run; they replace the README's
 * (docs/screenshots/) only with RAIL_SCREENSHOTS=1, so that a test run leaves the tree as it was.
 */
export const SCREENSHOTS_DIR =
  process.env.RAIL_SCREENSHOTS === '1' ? path.resolve('docs/screenshots') : path.join(os.tmpdir(), 'rail-screenshots')
/** A small phone: every page must be readable this narrow. */
export const PHONE = { width: 360, height: 800 }

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`)
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
}

export interface WatchedPage {
  page: Page
  context: BrowserContext
  /** Every URL the page requested. */
  requests: string[]
  /** Dialogs opened (an injected alert() that ran) and console errors (a CSP violation). */
  dialogs: string[]
  consoleErrors: string[]
}

export async function openPage(browser: Browser, origin: string): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: PHONE, locale: 'en-NG', timezoneId: 'Africa/Lagos' })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  const page = await context.newPage()
  const watched: WatchedPage = { page, context, requests: [], dialogs: [], consoleErrors: [] }
  page.on('request', (request) => watched.requests.push(request.url()))
  page.on('dialog', (dialog) => {
    watched.dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on('console', (message) => {
    if (message.type() === 'error') watched.consoleErrors.push(message.text())
  })
  return watched
}

/** Waits until the live region says `label` (the page updates it by itself). */
export async function waitForStatus(page: Page, label: string, timeoutMs = 15_000): Promise<void> {
  await waitForText(page, '#status-label', label, timeoutMs)
}

/** Waits until the element's whole text is `text` (a locator: no script evaluated in the page, which its CSP would refuse). */
export async function waitForText(
  page: Page,
  selector: string,
  text: string | RegExp,
  timeoutMs = 15_000,
): Promise<void> {
  const whole = typeof text === 'string' ? new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : text
  await page.locator(selector).filter({ hasText: whole }).waitFor({ timeout: timeoutMs })
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true })
}

/** The page fits the phone's width: nothing scrolls sideways. */
export async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as BrowserWindow
    return document.documentElement.scrollWidth <= innerWidth
  })
}

/** The little of a browser window the tests read (they compile without the DOM's types). */
export interface BrowserWindow {
  document: { documentElement: { scrollWidth: number } }
  innerWidth: number
  navigator: { clipboard: { readText(): Promise<string> } }
  stayedOnPage?: boolean
}

interface ContrastElement {
  childNodes: ArrayLike<{ nodeType: number; textContent: string | null }>
  parentElement: ContrastElement | null
  textContent: string | null
  checkVisibility(): boolean
}
interface ContrastWindow {
  document: { body: { querySelectorAll(selector: string): ArrayLike<ContrastElement> } }
  getComputedStyle(element: ContrastElement): {
    color: string
    backgroundColor: string
    fontSize: string
    fontWeight: string
  }
}

/**
 * Text whose contrast with the background behind it is below WCAG 2.2 AA: 4.5:1, or 3:1 for large
 * text (24 px, or 18.66 px bold). Backgrounds are the nearest opaque ones (the page uses no images).
 */
export async function lowContrastTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const win = globalThis as unknown as ContrastWindow
    const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number)
    const luminance = ([r, g, b]: number[]) => {
      const [lr, lg, lb] = [r!, g!, b!].map((channel) => {
        const c = channel / 255
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
      })
      return 0.2126 * lr! + 0.7152 * lg! + 0.0722 * lb!
    }
    const background = (element: ContrastElement | null): number[] => {
      for (let at = element; at; at = at.parentElement) {
        const colour = rgb(win.getComputedStyle(at).backgroundColor)
        if (colour.length === 3 || colour[3] === 1) return colour.slice(0, 3)
      }
      return [255, 255, 255]
    }
    const failures: string[] = []
    for (const element of Array.from(win.document.body.querySelectorAll('*'))) {
      const ownText = Array.from(element.childNodes).some(
        (node) => node.nodeType === 3 && (node.textContent ?? '').trim() !== '',
      )
      if (!ownText || !element.checkVisibility()) continue
      const style = win.getComputedStyle(element)
      const [foreground, behind] = [luminance(rgb(style.color)), luminance(background(element))]
      const ratio = (Math.max(foreground, behind) + 0.05) / (Math.min(foreground, behind) + 0.05)
      const sizePx = parseFloat(style.fontSize)
      const large = sizePx >= 24 || (sizePx >= 18.66 && Number(style.fontWeight) >= 700)
      if (ratio < (large ? 3 : 4.5))
        failures.push(`${(element.textContent ?? '').trim().slice(0, 40)}: ${ratio.toFixed(2)}`)
    }
    return failures
  })
}
