/**
 * Deterministic synthetic captures: sandbox test persons 1..1000 and the attack
 * generators used by tests and the benchmark. Pure and seeded: the same options
 * always produce the same descriptor.
 *
 * The model (docs/presence-descriptor.md, "Simulator"): a speaker reads aloud in
 * breath groups (a short inhalation pause, then speech on the exhalation); the
 * heart rate rises after each inhalation and falls during speech (respiratory
 * sinus arrhythmia); the camera sees the pulse through skin noise, motion
 * artefacts, dropped frames and clock jitter; the microphone hears the speech
 * envelope over room noise.
 *
 * The public entry of the simulator: persons.ts (the sandbox test persons), nuisance.ts (what
 * varies between sessions), physiology.ts (breath, speech, heart), sampling.ts (what the device
 * sees and sends), light.ts (the light challenge's physics), session.ts (a session assembled into a
 * descriptor), capture.ts (the sandbox's captures).
 */
export { simulateCapture } from "./capture.js";
export { controlledNuisance, type Nuisance, type SubjectState, wildNuisance } from "./nuisance.js";
export { faceEmbeddingOfPerson, personProfile, SANDBOX_PERSONS } from "./persons.js";
export { type LipsyncPulse, simulatePhysiology } from "./physiology.js";
export { ATTACK_TYPES, type AttackType, LIGHT_ATTACK_TYPES, simulateSession } from "./session.js";
