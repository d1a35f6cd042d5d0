import { InvalidTransition } from '../errors.js';

/** One action of a state machine: the states it is allowed from and the state it leads to. */
export interface TransitionDef<S extends string> {
  from: readonly S[];
  to: S;
}

/** A state machine built from a table of allowed transitions (stateMachine()). */
export interface StateMachine<S extends string, A extends string> {
  /** True when `action` is allowed from `state`. */
  can(state: S, action: A): boolean;
  /**
   * The state `action` leads to from `state`.
   * @throws InvalidTransition (422 INVALID_TRANSITION, `errors.status`) naming the current state and the action
   */
  next(state: S, action: A): S;
  /** The actions allowed from `state`, in table order (for UIs and docs). */
  actionsFrom(state: S): A[];
}

/**
 * Builds a state machine from a table `action -> {from, to}` (DESIGN.md §10 "refused state change":
 * 422 INVALID_TRANSITION, never 409). Services call `machine.next(row.status, 'approve')` inside the
 * transaction that locked the row, then write the returned state.
 * @param table the allowed transitions, e.g. `{ approve: { from: ['pending'], to: 'approved' } }`
 * @returns the guard
 */
export function stateMachine<S extends string, A extends string>(
  table: Record<A, TransitionDef<S>>,
): StateMachine<S, A> {
  const actions = Object.keys(table) as A[];
  return {
    can: (state, action) => table[action]?.from.includes(state) ?? false,
    next(state, action) {
      const t = table[action];
      if (!t || !t.from.includes(state)) throw new InvalidTransition(state, action, t?.from ?? []);
      return t.to;
    },
    actionsFrom: (state) => actions.filter((a) => table[a].from.includes(state)),
  };
}
