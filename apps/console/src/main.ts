// The console's entry (index.html loads it).
import './style.css'
import { startConsole } from './app.ts'

void startConsole(document.querySelector<HTMLElement>('#app')!)
