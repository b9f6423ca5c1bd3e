// What other modules may use of mail besides its service: the messages it knows how to write.
export { mails } from './templates.ts';
