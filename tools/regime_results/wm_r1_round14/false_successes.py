"""Which failures does the learned world model judge a success? Seed 0, Intel machine, kit model."""
import sys, json, torch
torch.set_num_threads(1)
from wmkit.profiles import get_profile
from wmkit.wm_r1 import experiment as ex, agent as ag, learned
from wmkit.core import build
from wmkit.envs import phone
seed=int(sys.argv[1]); wm_dir=sys.argv[2]; n=int(sys.argv[3])
p=get_profile("cpu"); s=ex.learned_world_sizes(p.wm_r1)
m,tok,_=ex.build_ladder_start(p, seed, s)
wm,wtok,_=build.load_world_model(wm_dir)
src=learned.edit_world_model_source(wm,wtok,s.wm_max_new_tokens)
tasks=ex.ladder_eval_tasks(s)[:n]
torch.manual_seed(seed+5)
pol=ag.Policy(m,tok,max_turn_tokens=s.max_turn_tokens,temperature=1.0)
eps=ag.run_episodes(pol,tasks,ex._make_source("world_model",src,0.0),imaginer=src,config=ag.AgentConfig(max_steps=s.max_steps,screen_view=s.screen_view))
rows=[]
for ep in eps:
    env=phone.PhoneEnv(max_steps=10_000); scr=env.reset(task=ep.task); trace=[]
    for a in ep.actions:
        if phone.parse_action(a) not in (None,("finished",)):
            nxt=env.step(a).observation
            pred=src.predict([(scr,a)])[0]
            trace.append((a, pred==nxt)); scr=nxt
    rows.append({"instr":ep.task.instruction,"template":ep.task.template,"actions":ep.actions,"judged":ep.success,"real":env.is_success(),"exact_steps":[e for _,e in trace],"ref":phone.reference_solution(ep.task)})
fp=[r for r in rows if r["judged"] and not r["real"]]; tp=[r for r in rows if r["judged"] and r["real"]]
print("n",len(rows),"tp",len(tp),"fp",len(fp),"fn",sum(r["real"] and not r["judged"] for r in rows))
for r in fp: print(json.dumps(r))
json.dump(rows,open(f"/tmp/fp/rows_seed{seed}.json","w"))
