// What other modules may use of weather besides its types: a forecast in words, for prompts.
export { describeForecast } from './open-meteo.ts';
