export { main } from './main';
export { USAGE } from './options';
