// Placeholder until the harness lands: starts nothing.
export default function setup(): void {}
