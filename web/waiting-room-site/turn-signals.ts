// "It is your turn" for a visitor whose tab is in the background: the tab's title and icon change, a short
// tone plays if the visitor ticked "Play a sound", and a notification shows if they asked for it with the
// button (permission is requested only by that click, never on load).

import { t } from './strings.ts';

/** A green dot, drawn here (the page loads nothing it does not serve itself). */
function turnIcon(): string {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 32;
  const pen = canvas.getContext('2d');
  if (!pen) return 'data:,';
  pen.fillStyle = '#127a3a';
  pen.beginPath();
  pen.arc(16, 16, 14, 0, 2 * Math.PI);
  pen.fill();
  return canvas.toDataURL('image/png');
}

export class TurnSignals {
  private readonly title = document.title;
  private wantNotification = false;
  private readonly notifyButton: HTMLButtonElement;
  private readonly sound: HTMLInputElement;
  private readonly say: (text: string) => void;

  constructor(notifyButton: HTMLButtonElement, sound: HTMLInputElement, say: (text: string) => void) {
    this.notifyButton = notifyButton;
    this.sound = sound;
    this.say = say;
    if (!('Notification' in window)) notifyButton.hidden = true;
    notifyButton.addEventListener('click', () => void this.askPermission());
  }

  private async askPermission(): Promise<void> {
    const answer = await Notification.requestPermission();
    this.wantNotification = answer === 'granted';
    this.say(t(this.wantNotification ? 'notify_on' : 'notify_blocked'));
    if (this.wantNotification) this.notifyButton.disabled = true;
  }

  /** `text`: what the notification says (the room's words for its turn). */
  yourTurn(text: string): void {
    document.title = t('your_turn_title', { title: this.title });
    document.getElementById('favicon')?.setAttribute('href', turnIcon());
    document.body.dataset.phase = 'your_turn';
    if (this.sound.checked) this.beep();
    if (this.wantNotification && document.visibilityState !== 'visible') new Notification(text);
  }

  reset(): void {
    document.title = this.title;
    document.getElementById('favicon')?.setAttribute('href', 'data:,');
  }

  private beep(): void {
    try {
      const audio = new AudioContext();
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      gain.gain.value = 0.15;
      tone.frequency.value = 880;
      tone.connect(gain).connect(audio.destination);
      tone.start();
      tone.stop(audio.currentTime + 0.4);
    } catch {
      // No audio in this browser: the title and the notification remain.
    }
  }
}
