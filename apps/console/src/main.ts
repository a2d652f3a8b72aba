// The console's entry (index.html loads it).
import './style.css'
import { startConsole } from './app.ts'

const root = document.querySelector<HTMLElement>('#app')!

// The skip link moves the focus to the view shown (the sign-in form before there is one). Followed as a plain link,
// `#content` would become the location's hash, which is the console's route: it would leave the view instead.
document.querySelector('a.skip')?.addEventListener('click', (event) => {
  event.preventDefault()
  const target = document.getElementById('content') ?? root.querySelector<HTMLElement>('section')
  if (!target) return
  if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1')
  target.focus()
})

void startConsole(root)
