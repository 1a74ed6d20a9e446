export { USAGE, main } from './main';
