// Progressive enhancement of the checkout page (served as a file: the page's Content-Security-
// Policy runs no inline script). Without it the page still shows everything; with it the status
// updates by itself, the expiry counts down, and the account number can be copied.
/* global document, window, navigator, setInterval, clearInterval */
'use strict'

const POLL_MS = 2000
const RETURN_DELAY_MS = 1500

function start() {
  const card = document.querySelector('main[data-status-url]')
  if (!card) return
  enableCopy()
  startCountdown()
  const open = card.dataset.state === 'awaiting_payment' || card.dataset.state === 'partially_paid'
  if (open) pollStatus(card)
  else if (card.dataset.state === 'paid') sendBack(card.dataset.returnUrl)
}

function enableCopy() {
  const button = document.querySelector('button.copy')
  if (!button || !navigator.clipboard) return
  button.hidden = false
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(button.dataset.copy).then(
      () => say('Account number copied'),
      () => say('Copy failed: select the number instead'),
    )
  })
}

function say(text) {
  const copied = document.getElementById('copied')
  if (copied) copied.textContent = text
}

function startCountdown() {
  const time = document.getElementById('expires-at')
  const countdown = document.getElementById('countdown')
  if (!time || !countdown) return
  const endsAt = Date.parse(time.getAttribute('datetime'))
  const tick = () => {
    const leftS = Math.max(0, Math.floor((endsAt - Date.now()) / 1000))
    const days = Math.floor(leftS / 86400)
    const hours = Math.floor((leftS % 86400) / 3600)
    const minutes = Math.floor((leftS % 3600) / 60)
    const seconds = leftS % 60
    const clock = [hours, minutes, seconds].map((part) => String(part).padStart(2, '0')).join(':')
    countdown.textContent = leftS === 0 ? '(time is up)' : `(${days > 0 ? `${days}d ` : ''}${clock} left)`
    if (leftS === 0) clearInterval(timer)
  }
  const timer = setInterval(tick, 1000)
  tick()
}

function pollStatus(card) {
  let busy = false
  const timer = setInterval(async () => {
    if (busy) return
    busy = true
    try {
      const response = await window.fetch(card.dataset.statusUrl, {
        headers: { Accept: 'application/json' },
        cache: 'no-store',
      })
      if (!response.ok) return
      const status = await response.json()
      show(card, status)
      if (status.state !== 'awaiting_payment' && status.state !== 'partially_paid') {
        clearInterval(timer)
        if (status.state === 'paid') sendBack(status.returnUrl)
        else hideAccount()
      }
    } catch {
      // The next poll tries again: a network blip changes nothing on the page.
    } finally {
      busy = false
    }
  }, POLL_MS)
}

function show(card, status) {
  if (card.dataset.state === status.state && document.getElementById('status-detail').textContent === status.detail)
    return
  card.dataset.state = status.state
  const region = document.getElementById('status')
  region.className = `status status-${status.state}`
  document.getElementById('status-label').textContent = status.label
  document.getElementById('status-detail').textContent = status.detail
  // The simulator offers what is still due, as a fresh page would.
  const amount = document.getElementById('simulate-amount')
  if (amount && status.remainingKobo !== null) amount.value = (status.remainingKobo / 100).toFixed(2)
}

function hideAccount() {
  for (const part of document.querySelectorAll('section.account, form.simulate, p.notice')) part.hidden = true
}

function sendBack(returnUrl) {
  hideAccount()
  if (!returnUrl) return
  document.getElementById('status-detail').textContent += ' Taking you back to the merchant…'
  window.setTimeout(() => window.location.assign(returnUrl), RETURN_DELAY_MS)
}

start()
